import { Component } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { JsonValue, Num, Page, Sparkline, Time } from '../components';
import { wildcard } from '../format';
import { history, stateObjects } from '../live';
import type { StateObject } from '../types';
import { useStore } from '../store';

const FILTERS = [
  ['sentinel', 'Sentinel'],
  ['package', 'Package'],
  ['name', 'Name'],
  ['type', 'Type'],
] as const;

type FilterName = (typeof FILTERS)[number][0];

const keyOf = (o: StateObject) => `${o.SentinelName}/${o.PackageName}/${o.Name}`;

/** Relative times ("12 s ago") are refreshed this often; a row otherwise re-renders only when its object changes. */
const TICK_MS = 10_000;

interface RowProps {
  object: StateObject;
  tick: number;
}

/**
 * One StateObject. A push re-renders its own row only (the others keep their object, so they are
 * skipped): with thousands of objects on the page a change still shows within milliseconds.
 */
class Row extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    return next.object !== this.props.object || next.tick !== this.props.tick;
  }

  override render({ object: o }: RowProps) {
    const key = keyOf(o);
    return (
      <tr data-key={key}>
        <td data-label="Sentinel / Package">
          {o.SentinelName}/{o.PackageName}
        </td>
        <th scope="row">{o.Name}</th>
        <td class="value" data-label="Value">
          <JsonValue value={o.Value} />
          <Sparkline points={history.get(key) ?? []} label={`History of ${o.Name}`} />
        </td>
        <td data-label="Type">{o.Type}</td>
        <td data-label="Lifetime">
          {o.Lifetime ? (
            <>
              <Num value={o.Lifetime} /> s
            </>
          ) : (
            'forever'
          )}
          {o.IsExpired ? <span class="badge warn">expired</span> : null}
        </td>
        <td data-label="Last update">
          <Time iso={o.LastUpdate} />
        </td>
      </tr>
    );
  }
}

export function StateObjects() {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), TICK_MS);
    return () => clearInterval(timer);
  }, []);
  const objects = useStore(stateObjects);
  const [filters, setFilters] = useState<Record<FilterName, string>>({ sentinel: '', package: '', name: '', type: '' });
  const match = {
    sentinel: wildcard(filters.sentinel),
    package: wildcard(filters.package),
    name: wildcard(filters.name),
    type: wildcard(filters.type),
  };
  // Map keys are Sentinel/Package/Name: ordering by them orders by sentinel, package, then name.
  const shown = [...objects.entries()]
    .filter(
      ([, o]) =>
        match.sentinel(o.SentinelName) && match.package(o.PackageName) && match.name(o.Name) && match.type(o.Type),
    )
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, o]) => o);
  return (
    <Page title="StateObjects">
      <p class="muted">
        Live: every change arrives through the hub's long-poll interface (SubscribeToStateObjects), without reloading.
      </p>
      <form class="filters" role="search" aria-label="Filter StateObjects" onSubmit={(e) => e.preventDefault()}>
        {FILTERS.map(([name, label]) => (
          <label key={name}>
            {label}
            <input
              type="search"
              name={name}
              placeholder="*"
              value={filters[name]}
              onInput={(e) => setFilters({ ...filters, [name]: (e.target as HTMLInputElement).value })}
            />
          </label>
        ))}
      </form>
      <p aria-live="polite" class="muted">
        <Num value={shown.length} /> of <Num value={objects.size} /> StateObjects
      </p>
      <div class="table-wrap">
        <table class="objects stack">
          <thead>
            <tr>
              <th scope="col">Sentinel / Package</th>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">Type</th>
              <th scope="col">Lifetime</th>
              <th scope="col">Last update</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((o) => (
              <Row key={keyOf(o)} object={o} tick={tick} />
            ))}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
