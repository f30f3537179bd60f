import type { GatewayConfigResponse, ListProviderKeysResponse } from '@platform/contract';
// The zod-free subpath: the list and labels without the rest of the contract in the bundle.
import { PROVIDER_LABELS as LABELS, PROVIDERS } from '@platform/contract/providers';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, errorWords, type TeamApi } from './api';
import { ConfirmDialog } from './dialog';
import { formatDate } from './format';
import { BusyButton, Card, ErrorText, Field, onSubmit, useAction } from './ui';

function wordsFor(err: unknown): string {
  if (err instanceof ApiError && err.code === 'service unavailable') {
    return 'Stored provider keys are turned off on this gateway (PROVIDER_KEYS_MASTER_KEYS is not set).';
  }
  return errorWords(err);
}

type ProviderChoice = GatewayConfigResponse['providers'][number];

/** Until the gateway's config arrives: the built-in providers. */
const BUILT_IN: readonly ProviderChoice[] = PROVIDERS.map((provider) => ({
  provider,
  label: LABELS[provider],
}));

/** The user's own provider keys. */
const PERSONAL = {
  listProviderKeys: () => api.listProviderKeys(),
  storeProviderKey: api.storeProviderKey,
  deleteProviderKey: api.deleteProviderKey,
};

/**
 * Bring your own key: store, list and delete provider keys. A stored key is
 * never shown again. `providers` (from `GET /api/v1/config`) includes those
 * the gateway's lanes config adds.
 */
export function ProviderKeys(props: {
  providers?: readonly ProviderChoice[];
  onAuthLost: (err: unknown) => void;
  /** A team's keys (shared by its keys; stored and deleted by admins); the user's own when absent. */
  team?: { api: TeamApi; canWrite: boolean };
}) {
  const providers = props.providers ?? BUILT_IN;
  const source = props.team?.api ?? PERSONAL;
  const canWrite = props.team?.canWrite ?? true;
  const labelOf = (name: string) => providers.find((p) => p.provider === name)?.label ?? name;
  const [stored, setStored] = useState<ListProviderKeysResponse | null>(null);
  const [provider, setProvider] = useState<string>('openai');
  const [secret, setSecret] = useState('');
  const [status, setStatus] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const { onAuthLost } = props;
  const storing = useAction(
    async () => {
      setStatus(null);
      await source.storeProviderKey({ provider, key: secret.trim() });
      setSecret('');
      setStatus(`Stored a key for ${labelOf(provider)}.`);
      await load();
    },
    { words: wordsFor, onError: onAuthLost },
  );
  const removing = useAction(
    async (gone: string) => {
      await source.deleteProviderKey(gone);
      setStatus(`Deleted the key for ${labelOf(gone)}.`);
      setDeleting(null);
      await load();
    },
    { words: wordsFor, onError: onAuthLost },
  );
  // A failed listing shows where a failed store does.
  const { setError } = storing;

  const load = useCallback(async () => {
    try {
      setStored(await source.listProviderKeys());
    } catch (err) {
      setError(wordsFor(err));
      onAuthLost(err);
    }
  }, [onAuthLost, setError, source]);
  useEffect(() => {
    void load();
  }, [load]);

  return (
    <Card id="provider-keys" title="Provider keys" headingRef={heading}>
      {props.team ? (
        <p>
          The team's own keys for AI providers. The gateway uses them for the team's keys instead of its own,
          stores them encrypted, and never shows them again.
        </p>
      ) : (
        <p>
          Your own keys for AI providers. The gateway uses them for your requests instead of its own, stores
          them encrypted, and never shows them again.
        </p>
      )}
      {stored && stored.length === 0 && <p>No provider keys stored.</p>}
      {stored && stored.length > 0 && (
        <ul class="plain-list" aria-label="Providers with a stored key">
          {stored.map((k) => (
            <li key={k.provider} data-provider={k.provider}>
              <span>
                <b>{labelOf(k.provider)}</b> <code class="last4">…{k.last4}</code>{' '}
                <span class="hint">stored {formatDate(k.created_at)}</span>
              </span>
              {canWrite && (
                <button
                  type="button"
                  class="danger small"
                  aria-label={`Delete the ${labelOf(k.provider)} key`}
                  onClick={() => {
                    removing.setError(null);
                    setDeleting(k.provider);
                  }}
                >
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && (
        <form onSubmit={onSubmit(storing.run)} class="stack-form">
          <label for="provider">Provider</label>
          <select id="provider" value={provider} onChange={(e) => setProvider(e.currentTarget.value)}>
            {providers.map((p) => (
              <option key={p.provider} value={p.provider}>
                {p.label}
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
      )}
      <p role="status" aria-live="polite">
        {status}
      </p>
      <ErrorText error={storing.error} />
      {deleting && (
        <ConfirmDialog
          title={`Delete the ${labelOf(deleting)} key?`}
          confirmLabel="Delete key"
          action={removing}
          onConfirm={() => void removing.run(deleting)}
          onCancel={() => setDeleting(null)}
          returnFocus={() => heading.current}
        >
          <p>Your requests then use the gateway's own {labelOf(deleting)} key, if it has one.</p>
        </ConfirmDialog>
      )}
    </Card>
  );
}
