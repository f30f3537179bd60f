import type { ApiKeySummary, CreateApiKeyResponse } from '@platform/contract';
import { useRef, useState } from 'preact/hooks';
import { api } from './api';
import { ConfirmDialog, Modal } from './dialog';
import { formatDate } from './format';
import { BusyButton, Card, ErrorText, Field, onSubmit, Table, useAction, useLoad } from './ui';

const NAME_RULE = /^[A-Za-z0-9]{1,64}$/;

/** Copies with the Clipboard API, or by selecting the text where that is unavailable. */
async function copyText(text: string, fallback: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    fallback?.select();
    return false;
  }
}

/** The gateway's base URL as this page sees it (the console is served by the gateway). */
function baseUrl(): string {
  return window.location.origin;
}

/** How to call the API with a new key: base URLs, both headers, curl and the OpenAI SDK. */
function HowToCall(props: { keyValue: string }) {
  const base = baseUrl();
  const curl = `curl ${base}/v1/chat/completions \\
  -H "Authorization: Bearer ${props.keyValue}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "free", "messages": [{"role": "user", "content": "Hello"}]}'`;
  const sdk = `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}/v1', apiKey: '${props.keyValue}' });
const answer = await client.chat.completions.create({
  model: 'free',
  messages: [{ role: 'user', content: 'Hello' }],
});`;
  return (
    <section class="how-to-call" aria-labelledby="how-to-call-title" data-testid="how-to-call">
      <h3 id="how-to-call-title">How to call it</h3>
      <dl class="facts">
        <dt>OpenAI-compatible base URL</dt>
        <dd>
          <code>{base}/v1</code>
        </dd>
        <dt>Gateway API</dt>
        <dd>
          <code>{base}/api/v1</code> (<a href="./docs">API reference</a>)
        </dd>
        <dt>Send the key as</dt>
        <dd>
          <code>Authorization: Bearer &lt;key&gt;</code> or <code>x-api-key: &lt;key&gt;</code>
        </dd>
      </dl>
      <h4>curl</h4>
      <pre>
        <code>{curl}</code>
      </pre>
      <h4>OpenAI SDK (Node)</h4>
      <pre>
        <code>{sdk}</code>
      </pre>
      <p class="hint">
        <code>model</code> is a lane (<code>free</code>), or one of its models as <code>GET /v1/models</code>{' '}
        lists them.
      </p>
    </section>
  );
}

export function NewKeyDialog(props: {
  created: CreateApiKeyResponse;
  onClose: () => void;
  returnFocus: () => HTMLElement | null;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    const ok = await copyText(props.created.key, input.current);
    setCopied(ok ? 'Copied to the clipboard.' : 'Selected: press Ctrl+C (or ⌘C) to copy.');
  };
  return (
    <Modal
      title={`API key “${props.created.name}” created`}
      onClose={props.onClose}
      returnFocus={props.returnFocus}
    >
      <p class="warning">
        <strong>Copy this key now: you will not see it again.</strong> The gateway keeps only a hash of it.
      </p>
      <label for="new-key">Your new API key</label>
      <div class="copy-row">
        <input
          id="new-key"
          ref={input}
          readOnly
          value={props.created.key}
          data-testid="new-key"
          onFocus={(e) => e.currentTarget.select()}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" aria-live="polite" class="hint">
        {copied}
      </p>
      <HowToCall keyValue={props.created.key} />
      <div class="actions">
        <button type="button" autofocus onClick={props.onClose}>
          I have copied it
        </button>
      </div>
    </Modal>
  );
}

/** Create, list and revoke the signed-in user's API keys. */
export function ApiKeys(props: {
  maxKeys: number;
  onCreated: (key: string) => void;
  onAuthLost: (err: unknown) => void;
}) {
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreateApiKeyResponse | null>(null);
  const [revoking, setRevoking] = useState<ApiKeySummary | null>(null);
  const createButton = useRef<HTMLButtonElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const { onAuthLost, onCreated } = props;

  const { data: keys, error: loadError, load } = useLoad(() => api.listKeys(), onAuthLost);

  const active = keys?.filter((k) => k.status === 'active').length ?? 0;

  const creating = useAction(
    async (wanted: string) => {
      const key = await api.createKey({ name: wanted, scope: 'ai' });
      setCreated(key);
      setName('');
      onCreated(key.key);
      await load();
    },
    { onError: onAuthLost },
  );
  const create = async () => {
    const wanted = name.trim();
    if (!NAME_RULE.test(wanted)) {
      creating.setError('A key name is 1 to 64 letters or digits (no spaces).');
      return;
    }
    await creating.run(wanted);
  };

  const revokeAction = useAction(
    async (key: ApiKeySummary) => {
      await api.revokeKey({ key_id: key.key_id });
      setRevoking(null);
      await load();
    },
    { onError: onAuthLost },
  );

  return (
    <Card id="api-keys" title="API keys" headingRef={heading}>
      <p>
        Programs send a key as <code>Authorization: Bearer &lt;key&gt;</code> (what OpenAI SDKs do) or in the{' '}
        <code>x-api-key</code> header. {active} of {props.maxKeys} active keys in use.
      </p>
      {active >= props.maxKeys && (
        <p class="note">
          You have reached the limit of {props.maxKeys} active keys. Revoke one to create another.
        </p>
      )}
      <form onSubmit={onSubmit(create)} class="inline-form">
        <Field
          id="key-name"
          label="New key name (letters and digits)"
          name="name"
          autocomplete="off"
          maxLength={64}
          value={name}
          onValue={setName}
          aria-describedby={creating.error ? 'key-form-error' : undefined}
        />
        <BusyButton buttonRef={createButton} busy={creating.busy} busyLabel="Creating…">
          Create key
        </BusyButton>
      </form>
      <ErrorText error={creating.error} id="key-form-error" />
      <ErrorText error={loadError} />
      {keys && keys.length === 0 && <p>No keys yet.</p>}
      {keys && keys.length > 0 && (
        <Table
          caption="Your API keys"
          columns={[
            'Name',
            { label: 'Prefix', wide: true },
            { label: 'Scope', wide: true },
            { label: 'Created', wide: true },
            'Last used',
            'Status',
            { label: 'Actions', hidden: true },
          ]}
        >
          {keys.map((k) => (
            <tr key={k.key_id} class={k.status === 'revoked' ? 'muted' : undefined} data-key-id={k.key_id}>
              <th scope="row">{k.name}</th>
              <td class="wide">
                <code>{k.key_prefix}…</code>
              </td>
              <td class="wide">{k.scope}</td>
              <td class="wide">{formatDate(k.created_at)}</td>
              <td>{k.last_used_at ? formatDate(k.last_used_at) : 'never'}</td>
              <td>{k.status}</td>
              <td>
                {k.status === 'active' && (
                  <button
                    type="button"
                    class="danger small"
                    aria-label={`Revoke key ${k.name}`}
                    onClick={() => {
                      revokeAction.setError(null);
                      setRevoking(k);
                    }}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {created && (
        <NewKeyDialog
          created={created}
          onClose={() => setCreated(null)}
          returnFocus={() => createButton.current}
        />
      )}
      {revoking && (
        <ConfirmDialog
          title={`Revoke key “${revoking.name}”?`}
          confirmLabel="Revoke key"
          action={revokeAction}
          onConfirm={() => void revokeAction.run(revoking)}
          onCancel={() => setRevoking(null)}
          returnFocus={() => heading.current}
        >
          <p>
            Programs using <code>{revoking.key_prefix}…</code> get <code>401 invalid api key</code> at once.
            This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </Card>
  );
}
