/** Instants as people read them: UTC, to the second, in a <time> element carrying the exact value. */
export function When({ at }: { at: string | null }) {
  if (at === null) return <span class="muted">—</span>;
  return <time dateTime={at}>{at.replace('T', ' ').replace(/(\.\d+)?Z$/, 'Z')}</time>;
}

export function StateBadge({ state }: { state: string }) {
  return <span class={`badge badge-${state}`}>{state}</span>;
}
