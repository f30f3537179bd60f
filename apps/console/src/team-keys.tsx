import type { ApiKeySummary, CreateApiKeyResponse } from '@platform/contract';
import { useRef, useState } from 'preact/hooks';
import type { TeamApi } from './api';
import { NewKeyDialog } from './api-keys';
import { ConfirmDialog, Modal } from './dialog';
import { formatDate } from './format';
import { describeRules, draftOf, EMPTY_RULES, type RulesDraft, RulesFields, rulesOf } from './key-rules-form';
import { BusyButton, Card, ErrorText, Field, onSubmit, Table, useAction, useLoad } from './ui';

const NAME_RULE = /^[A-Za-z0-9]{1,64}$/;

/** Changes the rules of one team key; the answer is the rules now in force. */
function RulesDialog(props: {
  team: TeamApi;
  keyRow: ApiKeySummary;
  onDone: () => void;
  onClose: () => void;
  onAuthLost: (err: unknown) => void;
}) {
  const [draft, setDraft] = useState<RulesDraft>(draftOf(props.keyRow));
  const saving = useAction(
    async () => {
      const { rules, expires_at } = rulesOf(draft);
      await props.team.setRules({
        key_id: props.keyRow.key_id,
        rules: rules ?? null,
        expires_at: expires_at ?? null,
      });
      props.onDone();
    },
    { onError: props.onAuthLost },
  );
  return (
    <Modal title={`Rules of “${props.keyRow.name}”`} onClose={props.onClose}>
      <form onSubmit={onSubmit(saving.run)}>
        <RulesFields prefix="edit-rules" draft={draft} onDraft={setDraft} />
        <ErrorText error={saving.error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <BusyButton busy={saving.busy} busyLabel="Saving…">
            Save rules
          </BusyButton>
        </div>
      </form>
    </Modal>
  );
}

/** The team's API keys with their rules: create (with rules), change the rules, revoke. */
export function TeamKeys(props: {
  team: TeamApi;
  canWrite: boolean;
  onCreated?: () => void;
  onAuthLost: (err: unknown) => void;
}) {
  const { team, onAuthLost } = props;
  const [name, setName] = useState('');
  const [draft, setDraft] = useState<RulesDraft>(EMPTY_RULES);
  const [created, setCreated] = useState<CreateApiKeyResponse | null>(null);
  const [editing, setEditing] = useState<ApiKeySummary | null>(null);
  const [revoking, setRevoking] = useState<ApiKeySummary | null>(null);
  const createButton = useRef<HTMLButtonElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const { data: keys, error: loadError, load } = useLoad(() => team.listKeys(), onAuthLost);

  const creating = useAction(
    async () => {
      const wanted = name.trim();
      if (!NAME_RULE.test(wanted)) throw new Error('A key name is 1 to 64 letters or digits (no spaces).');
      const { rules, expires_at } = rulesOf(draft);
      const key = await team.createKey({
        name: wanted,
        scope: 'ai',
        ...(rules ? { rules } : {}),
        ...(expires_at ? { expires_at } : {}),
      });
      setCreated(key);
      setName('');
      setDraft(EMPTY_RULES);
      props.onCreated?.();
      await load();
    },
    { onError: onAuthLost },
  );
  const revokeAction = useAction(
    async (key: ApiKeySummary) => {
      await team.revokeKey({ key_id: key.key_id });
      setRevoking(null);
      await load();
    },
    { onError: onAuthLost },
  );

  return (
    <Card id="team-keys" title="Team API keys" headingRef={heading}>
      <p class="hint">
        Usage of a team key is the team's: its budgets, its spend, its bill. A request outside a key's rules
        is refused with an error naming the rule.
      </p>
      <ErrorText error={loadError} />
      {keys && keys.length === 0 && <p>No team keys yet.</p>}
      {keys && keys.length > 0 && (
        <Table
          testId="team-keys-table"
          caption="The team's API keys"
          columns={[
            'Name',
            { label: 'Prefix', wide: true },
            'Rules',
            { label: 'Created', wide: true },
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
              <td class="wrap">{describeRules(k)}</td>
              <td class="wide">{formatDate(k.created_at)}</td>
              <td>{k.status}</td>
              <td>
                {props.canWrite && k.status === 'active' && (
                  <div class="row-actions">
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Change the rules of ${k.name}`}
                      onClick={() => setEditing(k)}
                    >
                      Rules
                    </button>
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
                  </div>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
      {props.canWrite ? (
        <form onSubmit={onSubmit(creating.run)} aria-label="Create a team key">
          <h3>New team key</h3>
          <Field
            id="team-key-name"
            label="Key name (letters and digits)"
            autocomplete="off"
            maxLength={64}
            value={name}
            onValue={setName}
          />
          <RulesFields prefix="team-key" draft={draft} onDraft={setDraft} />
          <BusyButton buttonRef={createButton} busy={creating.busy} busyLabel="Creating…">
            Create team key
          </BusyButton>
          <ErrorText error={creating.error} />
        </form>
      ) : (
        <p class="hint">Viewers see the team's keys; members and above create them.</p>
      )}
      {created && (
        <NewKeyDialog
          created={created}
          onClose={() => setCreated(null)}
          returnFocus={() => createButton.current}
        />
      )}
      {editing && (
        <RulesDialog
          team={team}
          keyRow={editing}
          onAuthLost={onAuthLost}
          onClose={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            void load();
          }}
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
