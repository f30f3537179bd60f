import type { GatewayConfigResponse, TeamSummary } from '@platform/contract';
import { useMemo, useState } from 'preact/hooks';
import { api } from './api';
import { type BudgetSource, Budgets } from './budgets';
import { ProviderKeys } from './provider-keys';
import { RequestDetail } from './request-detail';
import { RequestLog } from './request-log';
import { Spend } from './spend';
import { TeamAudit } from './team-audit';
import { TeamKeys } from './team-keys';
import { TeamMembers } from './team-members';
import { Card } from './ui';

/** What a role may do, in words, for the team's heading card. */
const ROLE_WORDS: Record<TeamSummary['role'], string> = {
  owner: 'You own this team: everything below, and handing ownership to another member.',
  admin: 'As an admin you invite and manage members and viewers, set budgets and read the audit log.',
  member: 'As a member you see the team and create and revoke its keys.',
  viewer: 'As a viewer you see the team, its keys, budgets, spend and request log.',
};

/** The sections of the team view, for the section links. */
export function teamSections(summary: TeamSummary): [string, string][] {
  return [
    ['team-members', 'Members'],
    ['team-keys', 'Team keys'],
    ['budgets', 'Budgets'],
    ['spend', 'Spend'],
    ['provider-keys', 'Provider keys'],
    ...(summary.permissions.includes('request_log.read')
      ? [['request-log', 'Request log'] as [string, string]]
      : []),
    ...(summary.permissions.includes('audit.read') ? [['team-audit', 'Audit log'] as [string, string]] : []),
  ];
}

/**
 * One team: members and invitations, its keys and their rules, budgets and
 * spend, its request log, the audit log; or, with `requestId` (#request/<id>),
 * that request of the team's log.
 */
export function TeamView(props: {
  summary: TeamSummary;
  userId: string;
  providers?: GatewayConfigResponse['providers'];
  requestId?: string | null;
  onTeamsChanged: (select?: string | null) => void;
  onAuthLost: (err: unknown) => void;
}) {
  const { summary, onAuthLost } = props;
  const team = useMemo(() => api.team(summary.team_id), [summary.team_id]);
  const may = (p: string) => summary.permissions.includes(p);
  // Counts the keys created here, so the request log's key filter offers the new one.
  const [keysVersion, setKeysVersion] = useState(0);
  const budgets = useMemo<BudgetSource>(
    () => ({
      list: () => team.budgets(),
      set: (body) => team.setBudget(body),
      remove: (b) => team.deleteBudget(b),
      canWrite: summary.permissions.includes('budgets.write'),
      everything: "all the team's usage",
    }),
    [team, summary.permissions],
  );
  if (props.requestId) return <RequestDetail id={props.requestId} log={team} onAuthLost={onAuthLost} />;
  return (
    <>
      <Card id="team" title={`Team ${summary.name}`}>
        <p data-testid="team-role">
          Your role: <b>{summary.role}</b>. {ROLE_WORDS[summary.role]}
        </p>
        <p class="hint">
          The team's keys, budgets and usage are its own, billed to the team (billing id{' '}
          <code>{summary.billing_user_id}</code>), not to its members.
        </p>
      </Card>
      <TeamMembers
        summary={summary}
        team={team}
        userId={props.userId}
        onAuthLost={onAuthLost}
        onLeft={() => props.onTeamsChanged(null)}
        onChanged={() => props.onTeamsChanged(summary.team_id)}
      />
      <TeamKeys
        team={team}
        canWrite={may('keys.write')}
        onCreated={() => setKeysVersion((v) => v + 1)}
        onAuthLost={onAuthLost}
      />
      <Budgets source={budgets} onAuthLost={onAuthLost} />
      <Spend refreshKey={0} read={team.usage} onAuthLost={onAuthLost} />
      <ProviderKeys
        providers={props.providers}
        team={{ api: team, canWrite: may('provider_keys.write') }}
        onAuthLost={onAuthLost}
      />
      {may('request_log.read') && (
        <RequestLog
          log={team}
          onAuthLost={onAuthLost}
          keysVersion={keysVersion}
          note={
            may('projects.write')
              ? "The requests made with the team's keys; a captured prompt and answer show on the request's page."
              : "The requests made with the team's keys; captured prompts and answers are for admins and the owner."
          }
        />
      )}
      {may('audit.read') && <TeamAudit team={team} onAuthLost={onAuthLost} />}
    </>
  );
}
