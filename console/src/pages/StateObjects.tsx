import { useState } from 'preact/hooks';
import { JsonValue, Num, Page, Sparkline, Time } from '../components';
import { wildcard } from '../format';
import { history, stateObjects } from '../live';
import { useStore } from '../store';

const FILTERS = [
  ['sentinel', 'Sentinel'],
  ['package', 'Package'],
  ['name', 'Name'],
  ['type', 'Type'],
] as const;

type FilterName = (typeof FILTERS)[number][0];

export function StateObjects() {
  const objects = useStore(stateObjects);
  const [filters, setFilters] = useState<Record<FilterName, string>>({ sentinel: '', package: '', name: '', type: '' });
  const match = {
    sentinel: wildcard(filters.sentinel),
    package: wildcard(filters.package),
    name: wildcard(filters.name),
    type: wildcard(filters.type),
  };
  const shown = [...objects.values()]
    .filter((o) => match.sentinel(o.SentinelName) && match.package(o.PackageName) && match.name(o.Name) && match.type(o.Type))
    .sort((a, b) => a.SentinelName.localeCompare(b.SentinelName) || a.PackageName.localeCompare(b.PackageName) || a.Name.localeCompare(b.Name));
  return (
    <Page title="StateObjects">
      <p class="muted">Live: every change arrives through the hub's long-poll interface (SubscribeToStateObjects), without reloading.</p>
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
            {shown.map((o) => {
              const key = `${o.SentinelName}/${o.PackageName}/${o.Name}`;
              return (
                <tr key={key} data-key={key}>
                  <td data-label="Sentinel / Package">{o.SentinelName}/{o.PackageName}</td>
                  <th scope="row">{o.Name}</th>
                  <td class="value" data-label="Value">
                    <JsonValue value={o.Value} />
                    <Sparkline points={history.get(key) ?? []} label={`History of ${o.Name}`} />
                  </td>
                  <td data-label="Type">{o.Type}</td>
                  <td data-label="Lifetime">
                    {o.Lifetime ? <><Num value={o.Lifetime} /> s</> : 'forever'}
                    {o.IsExpired ? <span class="badge warn">expired</span> : null}
                  </td>
                  <td data-label="Last update"><Time iso={o.LastUpdate} /></td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </Page>
  );
}
