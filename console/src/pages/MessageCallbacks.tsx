import { useState } from 'preact/hooks';
import { CONSOLE_NAME, consumer, HUB_BASE, management } from '../api';
import type { InputKind, ScopeChoice } from '../callForm';
import {
  curlOf,
  dataOf,
  enumOf,
  initialText,
  inputKind,
  parameterValue,
  rawHttpOf,
  sendMessageBody,
} from '../callForm';
import { CopyButton, ErrorAlert, JsonValue, Page, useAction, useLoad } from '../components';
import { newGuid } from '../ids';
import { awaitSagaReply } from '../live';
import type { DeclaredDescriptor, DescriptorEntry, Message, MessageCallback, PackageDescriptor } from '../types';

const SAGA_TIMEOUT_MS = 60_000;

function ParameterInput(props: {
  id: string;
  entry: DescriptorEntry;
  kind: InputKind;
  descriptor: PackageDescriptor;
  text: string;
  problem?: string;
  onInput: (text: string) => void;
}) {
  const { id, entry, kind, text, problem, onInput } = props;
  const describedBy = `${id}-help`;
  const help = (
    <span id={describedBy} class="help">
      {entry.TypeName}
      {entry.IsOptional
        ? ` — optional${entry.DefaultValue !== undefined && entry.DefaultValue !== null ? `, default ${JSON.stringify(entry.DefaultValue)}` : ''}`
        : ''}
      {entry.Description ? ` — ${entry.Description}` : ''}
      {problem ? (
        <strong class="problem">
          {' '}
          {entry.Name} {problem}
        </strong>
      ) : null}
    </span>
  );
  const common = { id, name: entry.Name, 'aria-describedby': describedBy, 'aria-invalid': problem ? true : undefined };
  if (kind === 'boolean') {
    return (
      <div class="field checkbox">
        <input
          type="checkbox"
          {...common}
          checked={text === 'true'}
          onChange={(e) => onInput(String((e.target as HTMLInputElement).checked))}
        />
        <label for={id}>{entry.Name}</label>
        {help}
      </div>
    );
  }
  let input;
  if (kind === 'enum') {
    const values = enumOf(props.descriptor, entry.TypeName)?.EnumValues ?? [];
    input = (
      <select {...common} value={text} onChange={(e) => onInput((e.target as HTMLSelectElement).value)}>
        {entry.IsOptional || text === '' ? <option value="">(choose)</option> : null}
        {values.map((v) => (
          <option key={v.Name} value={v.Name}>
            {v.Name}
            {v.Description ? ` — ${v.Description}` : ''}
          </option>
        ))}
      </select>
    );
  } else if (kind === 'json') {
    input = (
      <textarea
        {...common}
        rows={3}
        spellcheck={false}
        value={text}
        onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
      />
    );
  } else {
    const typed = (e: Event) => onInput((e.target as HTMLInputElement).value);
    input =
      kind === 'string' ? (
        <input {...common} type="text" value={text} onInput={typed} />
      ) : (
        <input {...common} type="number" step={kind === 'integer' ? 1 : 'any'} value={text} onInput={typed} />
      );
  }
  return (
    <div class="field">
      <label for={id}>{entry.Name}</label>
      {input}
      {help}
    </div>
  );
}

function CallbackForm({ declared, callback }: { declared: DeclaredDescriptor; callback: MessageCallback }) {
  const { Descriptor: descriptor, SentinelName: sentinel, PackageName: packageName } = declared;
  const parameters = callback.Parameters ?? [];
  const kinds = parameters.map((p) => inputKind(descriptor, p));
  const [texts, setTexts] = useState(() => parameters.map((p, i) => initialText(kinds[i], p)));
  const [scope, setScope] = useState<ScopeChoice>({ kind: 'Package', arg: descriptor.PackageName || packageName });
  const [sent, setSent] = useState<string | undefined>(undefined);
  const [reply, setReply] = useState<Message | undefined>(undefined);
  // The saga id the next send will carry: shown in the curl and HTTP forms too, so they are ready to run.
  const [sagaId, setSagaId] = useState(newGuid);
  const action = useAction();
  const idBase = `cb-${sentinel}-${packageName}-${callback.MessageKey}`.replace(/[^\w-]/g, '_');
  const results = parameters.map((p, i) => parameterValue(kinds[i], texts[i], p));
  const problems = results.some((r) => r.problem);
  const values = results.map((r) => r.value);
  // Trailing optional parameters left empty are not sent at all.
  while (values.length > 0 && results[values.length - 1].omitted) values.pop();
  const isSaga = Boolean(callback.ResponseType);
  const preview = sendMessageBody(scope, callback.MessageKey, dataOf(values), isSaga ? sagaId : undefined);

  const send = (event: Event) => {
    event.preventDefault();
    if (problems) return;
    setReply(undefined);
    setSent(undefined);
    void action.run(async () => {
      const waiting = isSaga ? awaitSagaReply(sagaId, AbortSignal.timeout(SAGA_TIMEOUT_MS)) : undefined;
      waiting?.catch(() => undefined);
      await consumer('SendMessage', { body: preview });
      if (isSaga) setSagaId(newGuid());
      setSent(isSaga ? 'Sent as a saga: waiting for its __Response…' : 'Sent.');
      if (waiting) {
        try {
          setReply(await waiting);
          setSent('Sent as a saga: the __Response arrived.');
        } catch {
          setSent(`Sent as a saga: no __Response within ${SAGA_TIMEOUT_MS / 1000} s.`);
        }
      }
    });
  };

  return (
    <article class="card callback" aria-labelledby={`${idBase}-title`}>
      <h3 id={`${idBase}-title`}>
        {callback.MessageKey}
        {isSaga ? <span class="badge">saga → {callback.ResponseType}</span> : null}
      </h3>
      {callback.Description ? <p>{callback.Description}</p> : null}
      <div class="callback-body">
        <form onSubmit={send} aria-label={`Send ${callback.MessageKey}`} noValidate>
          {parameters.length === 0 ? <p class="muted">No parameter.</p> : null}
          {parameters.map((p, i) => (
            <ParameterInput
              key={p.Name}
              id={`${idBase}-${p.Name}`}
              entry={p}
              kind={kinds[i]}
              descriptor={descriptor}
              text={texts[i]}
              problem={results[i].problem}
              onInput={(text) => setTexts(texts.map((t, j) => (j === i ? text : t)))}
            />
          ))}
          <fieldset class="scope">
            <legend>Scope</legend>
            <label>
              Kind
              <select
                value={scope.kind}
                onChange={(e) => {
                  const kind = (e.target as HTMLSelectElement).value as ScopeChoice['kind'];
                  const arg =
                    kind === 'Package'
                      ? descriptor.PackageName || packageName
                      : kind === 'Instance'
                        ? `${sentinel}/${packageName}`
                        : kind === 'Sentinel'
                          ? sentinel
                          : '';
                  setScope({ kind, arg });
                }}
              >
                <option value="Package">Package (every instance of it)</option>
                <option value="Instance">One instance</option>
                <option value="Group">Group</option>
                <option value="Sentinel">Sentinel</option>
                <option value="All">All</option>
              </select>
            </label>
            {scope.kind === 'All' ? null : (
              <label>
                {scope.kind === 'Group'
                  ? 'Groups (comma-separated)'
                  : scope.kind === 'Sentinel'
                    ? 'Sentinels'
                    : scope.kind === 'Instance'
                      ? 'Instance (Sentinel/Package)'
                      : 'Package'}
                <input
                  type="text"
                  value={scope.arg}
                  onInput={(e) => setScope({ ...scope, arg: (e.target as HTMLInputElement).value })}
                />
              </label>
            )}
          </fieldset>
          <button type="submit" disabled={problems || action.busy}>
            {isSaga ? `Send ${callback.MessageKey} as a saga` : `Send ${callback.MessageKey}`}
          </button>
          <ErrorAlert error={action.error} />
          {sent ? <p role="status">{sent}</p> : null}
          {reply ? (
            <div class="reply" aria-label={`Response of ${callback.MessageKey}`}>
              <h4>__Response from {reply.Sender.FriendlyName}</h4>
              <JsonValue value={reply.Data} />
            </div>
          ) : null}
        </form>
        <div class="snippets">
          <h4>As curl</h4>
          <pre aria-label="curl command">{curlOf(HUB_BASE.href, preview, CONSOLE_NAME)}</pre>
          <CopyButton text={curlOf(HUB_BASE.href, preview, CONSOLE_NAME)} label="Copy curl" />
          <h4>As raw HTTP</h4>
          <pre aria-label="raw HTTP request">{rawHttpOf(location.host, preview, CONSOLE_NAME, HUB_BASE.pathname)}</pre>
          <CopyButton
            text={rawHttpOf(location.host, preview, CONSOLE_NAME, HUB_BASE.pathname)}
            label="Copy HTTP request"
          />
        </div>
      </div>
    </article>
  );
}

export function MessageCallbacks() {
  const { data, error } = useLoad(() => management<DeclaredDescriptor[]>('descriptors'));
  return (
    <Page title="MessageCallbacks">
      <ErrorAlert error={error} />
      {data?.length === 0 ? <p>No package has declared a Package Descriptor yet (DeclarePackageDescriptor).</p> : null}
      {data?.map((declared) => (
        <section
          key={`${declared.SentinelName}/${declared.PackageName}`}
          aria-label={`${declared.SentinelName}/${declared.PackageName}`}
        >
          <h2>
            {declared.SentinelName}/{declared.PackageName}
            {declared.Descriptor.PackageName !== declared.PackageName ? (
              <span class="muted"> declares {declared.Descriptor.PackageName}</span>
            ) : null}
          </h2>
          {(declared.Descriptor.MessageCallbacks ?? []).length === 0 ? <p class="muted">No MessageCallback.</p> : null}
          {(declared.Descriptor.MessageCallbacks ?? []).map((callback) => (
            <CallbackForm key={callback.MessageKey} declared={declared} callback={callback} />
          ))}
        </section>
      ))}
    </Page>
  );
}
