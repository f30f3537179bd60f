import type { TeamSummary } from '@platform/contract';
import { useRef, useState } from 'preact/hooks';
import { api } from './api';
import { Modal } from './dialog';
import { BusyButton, ErrorText, Field, onSubmit, useAction } from './ui';

/** The personal view or one team's; a new team is created here and selected. */
export function TeamSwitcher(props: {
  teams: TeamSummary[];
  selected: string | null;
  onSelect: (teamId: string | null) => void;
  onCreated: (teamId: string) => void;
  onAuthLost: (err: unknown) => void;
}) {
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState('');
  const newButton = useRef<HTMLButtonElement>(null);
  const create = useAction(
    async () => {
      const team = await api.createTeam(name.trim());
      setName('');
      setCreating(false);
      props.onCreated(team.team_id);
    },
    { onError: props.onAuthLost },
  );
  return (
    <div class="switcher">
      <label for="workspace">Workspace</label>
      <select
        id="workspace"
        value={props.selected ?? ''}
        onChange={(e) => props.onSelect((e.target as HTMLSelectElement).value || null)}
      >
        <option value="">Personal</option>
        {props.teams.map((t) => (
          <option key={t.team_id} value={t.team_id}>
            Team {t.name} ({t.role})
          </option>
        ))}
      </select>
      <button type="button" class="secondary small" ref={newButton} onClick={() => setCreating(true)}>
        New team
      </button>
      {creating && (
        <Modal title="Create a team" onClose={() => setCreating(false)} returnFocus={() => newButton.current}>
          <form onSubmit={onSubmit(create.run)}>
            <p>You become its owner; invite others from its page.</p>
            <Field
              id="team-name"
              label="Team name"
              required
              maxLength={64}
              autocomplete="off"
              value={name}
              onValue={setName}
            />
            <ErrorText error={create.error} />
            <div class="actions">
              <button type="button" class="secondary" onClick={() => setCreating(false)}>
                Cancel
              </button>
              <BusyButton busy={create.busy} busyLabel="Creating…">
                Create team
              </BusyButton>
            </div>
          </form>
        </Modal>
      )}
    </div>
  );
}

/** What the invitation link opens once signed in: join the team, or not now (the link stays valid 7 days). */
export function JoinTeam(props: {
  token: string;
  onJoined: (teamId: string) => void;
  onDiscard: () => void;
}) {
  const joining = useAction(async () => {
    const joined = await api.acceptInvite(props.token);
    props.onJoined(joined.team_id);
  });
  return (
    <section class="card" aria-labelledby="join-title">
      <h2 id="join-title">Join the team</h2>
      <p>You opened a team invitation. Join to see the team and work with its keys.</p>
      <div class="actions">
        <BusyButton type="button" autofocus busy={joining.busy} busyLabel="Joining…" onClick={joining.run}>
          Join team
        </BusyButton>
        <button type="button" class="secondary" onClick={props.onDiscard}>
          Not now
        </button>
      </div>
      <ErrorText error={joining.error} />
    </section>
  );
}
