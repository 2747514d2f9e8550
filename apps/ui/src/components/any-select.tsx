/** A filter form's labelled choice among `values`, "any" first (an empty value: no filter). */
export function AnySelect({ label, name, values }: { label: string; name: string; values: readonly string[] }) {
  return (
    <label>
      {label}
      <select name={name}>
        <option value="">any</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
}
