import type { ApiKeySummary } from '@platform/contract';
import { useState } from 'preact/hooks';
import type { TeamApi } from './api';
import { Modal } from './dialog';
import { CREATED_COLUMN, KeyCard } from './key-card';
import { describeRules, draftOf, EMPTY_RULES, type RulesDraft, RulesFields, rulesOf } from './key-rules-form';
import { BusyButton, ErrorText, onSubmit, useAction } from './ui';

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
  const [draft, setDraft] = useState<RulesDraft>(EMPTY_RULES);
  const [editing, setEditing] = useState<ApiKeySummary | null>(null);
  // Counts the rule changes, so the list is read again after each.
  const [version, setVersion] = useState(0);

  return (
    <KeyCard
      id="team-keys"
      title="Team API keys"
      keysApi={team}
      onAuthLost={onAuthLost}
      refresh={version}
      intro={() => (
        <p class="hint">
          Usage of a team key is the team's: its budgets, its spend, its bill. A request outside a key's rules
          is refused with an error naming the rule.
        </p>
      )}
      table={{
        caption: "The team's API keys",
        testId: 'team-keys-table',
        empty: 'No team keys yet.',
        columns: [{ head: 'Rules', cell: (k) => <td class="wrap">{describeRules(k)}</td> }, CREATED_COLUMN],
      }}
      form={
        props.canWrite
          ? {
              id: 'team-key-name',
              label: 'Key name (letters and digits)',
              button: 'Create team key',
              placement: 'bottom',
              title: 'New team key',
              fields: <RulesFields prefix="team-key" draft={draft} onDraft={setDraft} />,
              body: () => {
                const { rules, expires_at } = rulesOf(draft);
                return { ...(rules ? { rules } : {}), ...(expires_at ? { expires_at } : {}) };
              },
              onCreated: () => {
                setDraft(EMPTY_RULES);
                props.onCreated?.();
              },
            }
          : null
      }
      readOnly={<p class="hint">Viewers see the team's keys; members and above create them.</p>}
      rowActions={(k) => (
        <button
          type="button"
          class="secondary small"
          aria-label={`Change the rules of ${k.name}`}
          onClick={() => setEditing(k)}
        >
          Rules
        </button>
      )}
    >
      {editing && (
        <RulesDialog
          team={team}
          keyRow={editing}
          onAuthLost={onAuthLost}
          onClose={() => setEditing(null)}
          onDone={() => {
            setEditing(null);
            setVersion((v) => v + 1);
          }}
        />
      )}
    </KeyCard>
  );
}
