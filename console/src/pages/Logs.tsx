import { Component } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Page, Time } from '../components';
import { wildcard } from '../format';
import { logs } from '../live';
import { useStore } from '../store';
import type { LogRecord } from '../types';

interface EntryProps {
  entry: LogRecord;
  /** Changes every few seconds, to refresh the relative times. */
  tick: number;
}

/** One entry: entries never change, so a new one re-renders only itself. */
class Entry extends Component<EntryProps> {
  override shouldComponentUpdate(next: EntryProps): boolean {
    return next.entry !== this.props.entry || next.tick !== this.props.tick;
  }

  override render({ entry: e }: EntryProps) {
    return (
      <li>
        <span class={`level level-${e.Level.toLowerCase()}`}>{e.Level}</span>
        <span class="who">
          {e.SentinelName}/{e.PackageName}
        </span>
        <span class="message">{e.Message}</span>
        <span class="when">
          <Time iso={e.Date} />
        </span>
      </li>
    );
  }
}

export function Logs() {
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((t) => t + 1), 10_000);
    return () => clearInterval(timer);
  }, []);
  const entries = useStore(logs);
  const [level, setLevel] = useState('');
  const [packageFilter, setPackageFilter] = useState('');
  const [text, setText] = useState('');
  const matchesPackage = wildcard(
    packageFilter.includes('/') || packageFilter === '' ? packageFilter : `*${packageFilter}*`,
  );
  const needle = text.trim().toLowerCase();
  const shown = entries
    .filter(
      (e) =>
        (!level || e.Level === level) &&
        matchesPackage(`${e.SentinelName}/${e.PackageName}`) &&
        (!needle || e.Message.toLowerCase().includes(needle)),
    )
    .slice()
    .reverse();
  return (
    <Page title="Logs">
      <p class="muted">Live: package logs (WriteLog) as they are written, newest first.</p>
      <form class="filters" role="search" aria-label="Filter logs" onSubmit={(e) => e.preventDefault()}>
        <label>
          Level
          <select value={level} onChange={(e) => setLevel((e.target as HTMLSelectElement).value)}>
            <option value="">All levels</option>
            <option value="Info">Info</option>
            <option value="Warn">Warn</option>
            <option value="Error">Error</option>
          </select>
        </label>
        <label>
          Package (Sentinel/Package, * wildcards)
          <input
            type="search"
            value={packageFilter}
            onInput={(e) => setPackageFilter((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          Message contains
          <input type="search" value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        </label>
      </form>
      <p aria-live="polite" class="muted">
        {shown.length} of {entries.length} entries
      </p>
      <ol class="log" aria-label="Log entries">
        {shown.map((e) => (
          <Entry key={e.Id} entry={e} tick={tick} />
        ))}
      </ol>
    </Page>
  );
}
