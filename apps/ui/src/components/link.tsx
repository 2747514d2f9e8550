import type { ComponentChildren } from 'preact';
import { onLinkClick } from '../navigation.js';

export function Link({ href, children, current }: { href: string; children: ComponentChildren; current?: boolean }) {
  return (
    <a href={href} onClick={onLinkClick} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}
