import type { ListProviderKeysResponse, Provider } from '@platform/contract';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, errorWords } from './api';
import { ConfirmDialog } from './dialog';
import { formatDate } from './format';
import { BusyButton, Card, ErrorText, Field, onSubmit, useAction } from './ui';

/** The providers of the contract, kept here as values so zod stays out of the bundle. */
const PROVIDERS = [
  'openai',
  'openrouter',
  'groq',
  'cerebras',
  'google',
  'elevenlabs',
] as const satisfies readonly Provider[];
// Fails to compile when the contract gains a provider that is missing above.
const allListed: Exclude<Provider, (typeof PROVIDERS)[number]> extends never ? true : never = true;
void allListed;

const LABELS: Record<Provider, string> = {
  openai: 'OpenAI',
  openrouter: 'OpenRouter',
  groq: 'Groq',
  cerebras: 'Cerebras',
  google: 'Google (Gemini)',
  elevenlabs: 'ElevenLabs',
};

function wordsFor(err: unknown): string {
  if (err instanceof ApiError && err.code === 'service unavailable') {
    return 'Stored provider keys are turned off on this gateway (PROVIDER_KEYS_MASTER_KEYS is not set).';
  }
  return errorWords(err);
}

/** Bring your own key: store, list and delete provider keys. A stored key is never shown again. */
export function ProviderKeys(props: { onAuthLost: (err: unknown) => void }) {
  const [stored, setStored] = useState<ListProviderKeysResponse | null>(null);
  const [provider, setProvider] = useState<Provider>('openai');
  const [secret, setSecret] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Provider | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const { onAuthLost } = props;
  const storing = useAction(
    async () => {
      setStatus(null);
      await api.storeProviderKey({ provider, key: secret.trim() });
      setSecret('');
      setStatus(`Stored a key for ${LABELS[provider]}.`);
      await load();
    },
    { words: wordsFor, onError: onAuthLost },
  );
  const removing = useAction(
    async (gone: Provider) => {
      await api.deleteProviderKey(gone);
      setStatus(`Deleted the key for ${LABELS[gone]}.`);
      setDeleting(null);
      await load();
    },
    { words: wordsFor, onError: onAuthLost },
  );
  // A failed listing shows where a failed store does.
  const { setError } = storing;

  const load = useCallback(async () => {
    try {
      setStored(await api.listProviderKeys());
    } catch (err) {
      setError(wordsFor(err));
      onAuthLost(err);
    }
  }, [onAuthLost, setError]);
  useEffect(() => {
    void load();
  }, [load]);

  return (
    <Card id="provider-keys" title="Provider keys" headingRef={heading}>
      <p>
        Your own keys for AI providers. The gateway uses them for your requests instead of its own, stores
        them encrypted, and never shows them again.
      </p>
      {stored && stored.length === 0 && <p>No provider keys stored.</p>}
      {stored && stored.length > 0 && (
        <ul class="plain-list" aria-label="Providers with a stored key">
          {stored.map((k) => (
            <li key={k.provider} data-provider={k.provider}>
              <span>
                <b>{LABELS[k.provider]}</b> <span class="hint">stored {formatDate(k.created_at)}</span>
              </span>
              <button
                type="button"
                class="danger small"
                aria-label={`Delete the ${LABELS[k.provider]} key`}
                onClick={() => {
                  removing.setError(null);
                  setDeleting(k.provider);
                }}
              >
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={onSubmit(storing.run)} class="stack-form">
        <label for="provider">Provider</label>
        <select
          id="provider"
          value={provider}
          onChange={(e) => setProvider(e.currentTarget.value as Provider)}
        >
          {PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {LABELS[p]}
            </option>
          ))}
        </select>
        <Field
          id="provider-secret"
          label="Key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          minLength={8}
          maxLength={512}
          value={secret}
          onValue={setSecret}
        />
        <BusyButton busy={storing.busy} busyLabel="Storing…">
          Store key
        </BusyButton>
      </form>
      <p role="status" aria-live="polite">
        {status}
      </p>
      <ErrorText error={storing.error} />
      {deleting && (
        <ConfirmDialog
          title={`Delete the ${LABELS[deleting]} key?`}
          confirmLabel="Delete key"
          action={removing}
          onConfirm={() => void removing.run(deleting)}
          onCancel={() => setDeleting(null)}
          returnFocus={() => heading.current}
        >
          <p>Your requests then use the gateway's own {LABELS[deleting]} key, if it has one.</p>
        </ConfirmDialog>
      )}
    </Card>
  );
}
