/** Small building blocks shared by the pages. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { HubFailure, reconnections, Unreachable } from './api';
import { absoluteTime, formatNumber, relativeTime } from './format';
import { useStore } from './store';

/** The hub's Message and MessageDetail, as text, in an alert (not only as colour). */
export function ErrorAlert({ error }: { error: unknown }) {
  if (!error) return null;
  const failure = error instanceof HubFailure ? error : undefined;
  const text = failure
    ? failure.message
    : error instanceof Unreachable
      ? 'The hub cannot be reached: reconnecting…'
      : String((error as Error).message ?? error);
  return (
    <div role="alert" class="alert">
      <strong>{text}</strong>
      {failure?.detail ? <div class="detail">{failure.detail}</div> : null}
    </div>
  );
}

/** Loads data when shown and again after each reconnection; `reload()` for after a change. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [version, setVersion] = useState(0);
  const reconnected = useStore(reconnections);
  useEffect(() => {
    let current = true;
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(undefined);
      },
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [version, reconnected, ...deps]);
  return { data, error, reload: () => setVersion((v) => v + 1), setData };
}

/** Runs an action, keeping its error for display; answers whether it succeeded. */
export function useAction() {
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, setError };
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span>never</span>;
  return (
    <time dateTime={iso} title={absoluteTime(iso)}>
      {relativeTime(iso)} <span class="muted">({absoluteTime(iso)})</span>
    </time>
  );
}

/** One figure of a `<dl class="stats">`: its label and its value. */
export const Stat = ({ label, children }: { label: string; children: ComponentChildren }) => (
  <div>
    <dt>{label}</dt>
    <dd>{children}</dd>
  </div>
);

export const Num = ({ value }: { value: number }) => <span class="num">{formatNumber(value)}</span>;

/** A JSON value as it is; objects and arrays collapsible (open when small). */
export function JsonValue({ value }: { value: unknown }) {
  if (value === null || typeof value !== 'object') {
    const text = typeof value === 'number' ? formatNumber(value) : JSON.stringify(value);
    return <code class={`json json-${value === null ? 'null' : typeof value}`}>{text}</code>;
  }
  const text = JSON.stringify(value, null, 2);
  const summary = Array.isArray(value) ? `Array (${value.length})` : `Object (${Object.keys(value).length} keys)`;
  return (
    <details class="json-details" open={text.length < 120}>
      <summary>{summary}</summary>
      <pre class="json">{text}</pre>
    </details>
  );
}

/** A small line chart of the numeric values seen while the page is open (SVG, with a text summary). */
export function Sparkline({ points, label }: { points: { at: number; value: number }[]; label: string }) {
  if (points.length < 2) return null;
  const width = 160;
  const height = 36;
  const values = points.map((p) => p.value);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const first = points[0].at;
  const span = Math.max(1, points[points.length - 1].at - first);
  const path = points
    .map((p, i) => {
      const x = ((p.at - first) / span) * (width - 4) + 2;
      const y = max === min ? height / 2 : height - 2 - ((p.value - min) / (max - min)) * (height - 4);
      return `${i === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
  const description = `${label}: ${points.length} values seen, from ${formatNumber(min)} to ${formatNumber(max)}, last ${formatNumber(values[values.length - 1])}`;
  return (
    <svg
      class="sparkline"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      role="img"
      aria-label={description}
    >
      <title>{description}</title>
      <path d={path} fill="none" stroke="currentColor" stroke-width="1.5" />
    </svg>
  );
}

/** A button that copies text, saying so. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      class="small"
      onClick={() => {
        const done = () => {
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        };
        // The clipboard API exists only on https or localhost; a hub on the LAN is often plain http.
        if (navigator.clipboard && isSecureContext) {
          void navigator.clipboard.writeText(text).then(done, () => undefined);
          return;
        }
        const area = document.createElement('textarea');
        area.value = text;
        area.setAttribute('readonly', '');
        area.className = 'offscreen';
        document.body.append(area);
        area.select();
        if (document.execCommand('copy')) done();
        area.remove();
      }}
    >
      {copied ? 'Copied' : label}
    </button>
  );
}

export function Page({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <section aria-labelledby="page-title">
      <header class="page-header">
        <h1 id="page-title">{title}</h1>
        {actions}
      </header>
      {children}
    </section>
  );
}

/** A JSON document edited as text, validated before it is posted. */
export function JsonEditor({
  label,
  load,
  save,
  submit = `Save ${label}`,
  rows = 6,
  deps = [],
}: {
  label: string;
  load: () => Promise<unknown>;
  save: (value: unknown) => Promise<unknown>;
  /** The button's name (default "Save <label>"). */
  submit?: string;
  rows?: number;
  /** What `load` depends on, as for useLoad. */
  deps?: unknown[];
}) {
  const loaded = useLoad(load, deps);
  const [text, setText] = useState<string | undefined>(undefined);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const current = text ?? (loaded.data === undefined ? '' : JSON.stringify(loaded.data, null, 2));
  let problem: string | undefined;
  try {
    if (current) JSON.parse(current);
  } catch (error) {
    problem = `Not valid JSON: ${(error as Error).message}`;
  }
  const id = `json-${label}`.replace(/[^\w-]/g, '_');
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (problem) return;
        setSaved(false);
        void action.run(async () => {
          loaded.setData(await save(JSON.parse(current)));
          setText(undefined);
          setSaved(true);
        });
      }}
    >
      <label for={id}>{label}</label>
      <textarea
        id={id}
        rows={rows}
        spellcheck={false}
        value={current}
        aria-invalid={problem ? true : undefined}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
      />
      {problem ? <p class="problem">{problem}</p> : null}
      <ErrorAlert error={loaded.error ?? action.error} />
      <button type="submit" disabled={Boolean(problem) || action.busy}>
        {submit}
      </button>
      {saved ? <span role="status"> Saved.</span> : null}
    </form>
  );
}
