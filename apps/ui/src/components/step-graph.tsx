/**
 * A multi-step run's graph: one box per step, layered left to right by what it depends on, with an
 * arrow from each upstream step. A box tells the step's name, state (colour and word), duration and
 * attempts, and is dashed for a step that runs always; clicking it (or Enter or Space on it) selects it.
 */
import { useMemo } from 'preact/hooks';
import { fitText, GRAPH_BOX, layoutSteps, stepAttempts, stepDuration, stepLabel, type RunStep } from '../logic/step-graph.js';
import { useNow } from './use-now.js';

/** As many characters of a name as fit a box at the name's size; the whole name is the box's tooltip. */
const NAME_CHARS = 22;

export function StepGraph({ steps, selected, onSelect, labelledBy }: { steps: RunStep[]; selected: string | null; onSelect: (name: string) => void; labelledBy: string }) {
  const layout = useMemo(() => layoutSteps(steps), [steps]);
  const running = steps.some((s) => s.startedAt !== null && s.finishedAt === null);
  const now = useNow(running ? 1_000 : null);
  const byName = new Map(steps.map((s) => [s.name, s]));
  const touches = (edge: { from: string; to: string }) => selected !== null && (edge.from === selected || edge.to === selected);
  // The selected step's edges last, so they are drawn over the others.
  const edges = [...layout.edges.filter((e) => !touches(e)), ...layout.edges.filter(touches)];
  const { width, height } = GRAPH_BOX;
  return (
    <div class="scroll">
      <svg
        data-testid="step-graph"
        class="step-graph"
        role="group"
        aria-labelledby={labelledBy}
        width={layout.width}
        height={layout.height}
        viewBox={`0 0 ${layout.width} ${layout.height}`}
      >
        <defs>
          <marker id="step-arrow" class="step-arrow" viewBox="0 0 10 10" refX={10} refY={5} markerWidth={10} markerHeight={10} markerUnits="userSpaceOnUse" orient="auto">
            <path d="M 0 0 L 10 5 L 0 10 z" />
          </marker>
          <marker id="step-arrow-selected" class="step-arrow selected" viewBox="0 0 10 10" refX={10} refY={5} markerWidth={12} markerHeight={12} markerUnits="userSpaceOnUse" orient="auto">
            <path d="M 0 0 L 10 5 L 0 10 z" />
          </marker>
        </defs>
        <g aria-hidden="true">
          {edges.map((edge) => (
            <path
              key={`${edge.from}→${edge.to}`}
              class={touches(edge) ? 'step-edge selected' : 'step-edge'}
              d={edge.path}
              marker-end={touches(edge) ? 'url(#step-arrow-selected)' : 'url(#step-arrow)'}
            />
          ))}
        </g>
        {layout.steps.map(({ name, x, y }) => {
          const step = byName.get(name)!;
          const isSelected = name === selected;
          const classes = ['step-node', `state-${step.state}`, step.when === 'always' ? 'always' : '', isSelected ? 'selected' : ''].filter(Boolean).join(' ');
          return (
            <g
              key={name}
              data-testid={`step-node-${name}`}
              class={classes}
              transform={`translate(${x} ${y})`}
              role="button"
              tabindex={0}
              aria-label={stepLabel(step, now)}
              aria-current={isSelected ? 'true' : undefined}
              onClick={() => onSelect(name)}
              onKeyDown={(event) => {
                if (event.key === 'Enter' || event.key === ' ') {
                  event.preventDefault();
                  onSelect(name);
                }
              }}
            >
              <title>{name}</title>
              <rect class="step-focus" x={-5} y={-5} width={width + 10} height={height + 10} rx={9} />
              <rect class="step-box" width={width} height={height} rx={6} />
              <text class="step-name" x={10} y={22}>
                {fitText(name, NAME_CHARS)}
              </text>
              <text class="step-state" x={10} y={42}>
                {step.state}
                {step.when === 'always' ? ' · always' : ''}
              </text>
              <text x={10} y={60}>
                {stepDuration(step, now)}
              </text>
              <text x={10} y={78}>
                {stepAttempts(step)}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
