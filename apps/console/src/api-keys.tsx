import { api } from './api';
import { formatDate } from './format';
import { CREATED_COLUMN, KeyCard } from './key-card';

/** Create, list and revoke the signed-in user's API keys. */
export function ApiKeys(props: {
  maxKeys: number;
  onCreated: (key: string) => void;
  onAuthLost: (err: unknown) => void;
}) {
  const { maxKeys, onCreated } = props;
  return (
    <KeyCard
      id="api-keys"
      title="API keys"
      keysApi={api}
      onAuthLost={props.onAuthLost}
      intro={(keys) => {
        const active = keys?.filter((k) => k.status === 'active').length ?? 0;
        return (
          <>
            <p>
              Programs send a key as <code>Authorization: Bearer &lt;key&gt;</code> (what OpenAI SDKs do) or
              in the <code>x-api-key</code> header. {active} of {maxKeys} active keys in use.
            </p>
            {active >= maxKeys && (
              <p class="note">
                You have reached the limit of {maxKeys} active keys. Revoke one to create another.
              </p>
            )}
          </>
        );
      }}
      form={{
        id: 'key-name',
        label: 'New key name (letters and digits)',
        button: 'Create key',
        placement: 'top',
        onCreated: (key) => onCreated(key.key),
      }}
      table={{
        caption: 'Your API keys',
        empty: 'No keys yet.',
        columns: [
          { head: { label: 'Scope', wide: true }, cell: (k) => <td class="wide">{k.scope}</td> },
          CREATED_COLUMN,
          {
            head: 'Last used',
            cell: (k) => <td>{k.last_used_at ? formatDate(k.last_used_at) : 'never'}</td>,
          },
        ],
      }}
    />
  );
}
