/** What the dashboard's bar charts share: a hatch pattern for a bar's fill, and the axes (scale, zero, first and last instant). */
import { instantInWords } from '../logic/sensor-evaluations.js';

export function Hatch({ id, className, size }: { id: string; className: string; size: number }) {
  return (
    <pattern id={id} class={className} width={size} height={size} patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
      <rect width={size} height={size} />
      <line x1={0} y1={0} x2={0} y2={size} />
    </pattern>
  );
}

export interface AxesProps {
  left: number;
  top: number;
  right: number;
  width: number;
  height: number;
  baseline: number;
  /** The value at the top of the scale, in words. */
  scaleLabel: string;
  from: string | null;
  /** Shown at the right end unless null. */
  to: string | null;
  /** How far above the chart's bottom edge the instants sit. */
  instantsInset: number;
}

export function Axes(p: AxesProps) {
  return (
    <g class="chart-axis" aria-hidden="true">
      <line x1={p.left - 4} y1={p.top} x2={p.width} y2={p.top} class="chart-grid" />
      <text x={p.left - 8} y={p.top + 4} text-anchor="end">
        {p.scaleLabel}
      </text>
      <line x1={p.left - 4} y1={p.baseline} x2={p.width} y2={p.baseline} />
      <text x={p.left - 8} y={p.baseline + 4} text-anchor="end">
        0
      </text>
      {p.from && (
        <text x={p.left} y={p.height - p.instantsInset}>
          {instantInWords(p.from)}
        </text>
      )}
      {p.to && (
        <text x={p.width - p.right} y={p.height - p.instantsInset} text-anchor="end">
          {instantInWords(p.to)}
        </text>
      )}
    </g>
  );
}
