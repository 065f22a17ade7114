import { diffLines } from 'diff';
import { XMLValidator } from 'fast-xml-parser';
import { useState } from 'preact/hooks';
import { management } from '../api';
import { ErrorAlert, Page, useAction, useLoad } from '../components';
import { RecoveryForm } from './Sentinels';

/**
 * Well-formedness, checked in the page before anything is posted (the hub then validates fully).
 * fast-xml-parser's validator, as on the hub: the browser's DOMParser reports errors through an element
 * with an inline style, which the console's content security policy forbids.
 */
function xmlProblem(text: string): string | undefined {
  if (text.trim() === '') return 'The configuration is empty.';
  const result = XMLValidator.validate(text);
  if (result === true) return undefined;
  return `The XML is not well-formed: ${result.err.msg} (line ${result.err.line}, column ${result.err.col}).`;
}

function Diff({ from, to }: { from: string; to: string }) {
  const parts = diffLines(from, to);
  const changed = parts.some((p) => p.added || p.removed);
  if (!changed) return <p class="muted">No difference from the applied configuration.</p>;
  return (
    <pre class="diff" aria-label="Differences from the applied configuration">
      {parts.map((part, i) => {
        const sign = part.added ? '+' : part.removed ? '-' : ' ';
        const lines = part.value.replace(/\n$/, '').split('\n');
        // Unchanged runs are shortened to their edges: the diff shows what changed, with some context.
        const shown =
          !part.added && !part.removed && lines.length > 6 ? [...lines.slice(0, 2), '…', ...lines.slice(-2)] : lines;
        return (
          <span key={i} class={part.added ? 'added' : part.removed ? 'removed' : 'same'}>
            {shown.map((line) => `${sign} ${line}\n`).join('')}
          </span>
        );
      })}
    </pre>
  );
}

export function Configuration() {
  const file = useLoad(() => management<string>('configuration'));
  const applied = useLoad(() => management<string>('configuration/applied'));
  const [text, setText] = useState<string | undefined>(undefined);
  const [deploy, setDeploy] = useState(false);
  const [outcome, setOutcome] = useState<string | undefined>(undefined);
  const [localProblem, setLocalProblem] = useState<string | undefined>(undefined);
  const action = useAction();
  const current = text ?? file.data ?? '';

  const save = async (reload: boolean) => {
    setOutcome(undefined);
    const problem = xmlProblem(current);
    setLocalProblem(problem);
    if (problem) return;
    const ok = await action.run(async () => {
      await management('configuration', { method: 'POST', rawBody: current, contentType: 'application/xml' });
      if (!reload) {
        setOutcome('Saved to the configuration file; not applied yet (Reload applies it).');
        return;
      }
      const result = await management<{ DeployedTo: string[] }>('configuration/reload', {
        query: { deployConfiguration: deploy },
      });
      setOutcome(
        `Saved and applied.${deploy ? ` Settings deployed to ${result.DeployedTo.length === 0 ? 'no instance (no settings changed)' : result.DeployedTo.join(', ')}.` : ''}`,
      );
    });
    if (ok) {
      file.reload();
      applied.reload();
      setText(undefined);
    }
  };

  return (
    <Page title="Configuration">
      <p class="muted">
        The hub's XML configuration file. Saving validates it (in the page, then fully on the hub) before anything is
        written; Reload applies it.
      </p>
      <ErrorAlert error={file.error ?? applied.error} />
      <label for="configuration-xml">Configuration XML</label>
      <textarea
        id="configuration-xml"
        class="code"
        rows={22}
        spellcheck={false}
        value={current}
        onInput={(e) => {
          setText((e.target as HTMLTextAreaElement).value);
          setLocalProblem(undefined);
        }}
      />
      <div class="row">
        <button type="button" disabled={action.busy} onClick={() => void save(false)}>
          Validate and save
        </button>
        <label class="checkbox">
          <input type="checkbox" checked={deploy} onChange={(e) => setDeploy((e.target as HTMLInputElement).checked)} />
          Deploy settings to the package instances
        </label>
        <button type="button" disabled={action.busy} onClick={() => void save(true)}>
          Save and reload
        </button>
        <button
          type="button"
          class="secondary"
          disabled={action.busy || text === undefined}
          onClick={() => {
            setText(undefined);
            setLocalProblem(undefined);
          }}
        >
          Discard changes
        </button>
      </div>
      {localProblem ? (
        <div role="alert" class="alert">
          <strong>{localProblem}</strong>
        </div>
      ) : null}
      <ErrorAlert error={action.error} />
      {outcome ? <p role="status">{outcome}</p> : null}
      <h2>Differences from the applied configuration</h2>
      {applied.data !== undefined ? <Diff from={applied.data} to={current} /> : null}
      <h2>Global recovery options</h2>
      <p class="muted">
        Used by every package instance that has none of its own (applied at once, and written to the file).
      </p>
      <RecoveryForm path="configuration/recoveryoptions" name="every instance" />
    </Page>
  );
}
