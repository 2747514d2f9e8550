/** A page's definition block: its facts as term and value pairs, under one heading. */
import type { ComponentChildren } from 'preact';

export type DefinitionRow = [string, ComponentChildren];

export function DefinitionBlock({ rows, title = 'Definition', children }: { rows: readonly DefinitionRow[]; title?: string; children?: ComponentChildren }) {
  return (
    <section aria-labelledby="definition">
      <h2 id="definition">{title}</h2>
      <dl class="pairs">
        {rows.map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      {children}
    </section>
  );
}
