import type { GatewayConfigResponse, SessionResponse, TeamSummary } from '@platform/contract';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, api, errorWords } from './api';
import { ApiKeys } from './api-keys';
import { Budgets } from './budgets';
import { Mcp } from './mcp';
import { ProjectCapture } from './project-capture';
import { ProviderKeys } from './provider-keys';
import { QuickTry } from './quick-try';
import { RequestDetail } from './request-detail';
import { RequestLog } from './request-log';
import { FinishSignIn, SignInForm } from './sign-in';
import { Spend } from './spend';
import { JoinTeam, TeamSwitcher } from './team-switcher';
import { TeamView, teamSections } from './team-view';
import { ErrorText } from './ui';
import { Usage } from './usage';

/** The sign-in code the mailed link carries, if the page was opened from one. */
function codeFromUrl(): string | null {
  return new URLSearchParams(window.location.search).get('code');
}

/** The team invitation the mailed invitation link carries, if any (kept in memory once read). */
function inviteFromUrl(): string | null {
  return new URLSearchParams(window.location.search).get('team_invite');
}

const REQUEST_PAGE = /^#request\/([0-9a-f-]{36})$/i;

/** The request a `#request/<id>` address opens, or null for the console's sections. */
function requestOfHash(): string | null {
  return REQUEST_PAGE.exec(window.location.hash)?.[1] ?? null;
}

/** Takes the code out of the address bar and history once it is used or dismissed. */
function forgetCode(): void {
  window.history.replaceState(null, '', window.location.pathname);
}

export function App() {
  const [config, setConfig] = useState<GatewayConfigResponse | null>(null);
  const [session, setSession] = useState<SessionResponse | null | undefined>(undefined);
  const [code, setCode] = useState(codeFromUrl);
  const [error, setError] = useState<string | null>(null);
  // The plaintext of a key created on this page, in memory only, for the quick try.
  const [freshKey, setFreshKey] = useState<string | null>(null);
  const [usageVersion, setUsageVersion] = useState(0);
  const [invite, setInvite] = useState(inviteFromUrl);
  const [teams, setTeams] = useState<TeamSummary[]>([]);
  // The team whose view is shown; null: the personal view.
  const [teamId, setTeamId] = useState<string | null>(null);
  // The request page (#request/<id>) replaces the sections; the back link or Back returns to them.
  const [requestId, setRequestId] = useState(requestOfHash);
  useEffect(() => {
    const onHash = () => setRequestId(requestOfHash());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const loadSession = useCallback(async () => {
    try {
      setSession(await api.session());
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setSession(null);
      else {
        setSession(null);
        setError(errorWords(err));
      }
    }
  }, []);

  useEffect(() => {
    // The session is asked for only when a session cookie came along: signed out,
    // the page makes no request that answers 401 (the browser would log it).
    api.config().then(
      (loaded) => {
        setConfig(loaded);
        if (loaded.session_cookie) void loadSession();
        else setSession(null);
      },
      (err: unknown) => {
        setError(errorWords(err));
        void loadSession();
      },
    );
  }, [loadSession]);

  /** Reads the caller's teams; `select` switches the view (null: personal, undefined: as it is). */
  const loadTeams = useCallback(async (select?: string | null) => {
    try {
      const list = await api.listTeams();
      setTeams(list);
      setTeamId((current) => {
        const wanted = select === undefined ? current : select;
        return wanted && list.some((t) => t.team_id === wanted) ? wanted : null;
      });
    } catch (err) {
      setError(errorWords(err));
    }
  }, []);

  useEffect(() => {
    if (session) void loadTeams();
  }, [session, loadTeams]);

  const onAuthLost = useCallback((err: unknown) => {
    if (err instanceof ApiError && err.code === 'missing_authentication') {
      setSession(null);
      setFreshKey(null);
    }
  }, []);

  const signOut = async () => {
    try {
      await api.logout();
    } catch (err) {
      setError(errorWords(err));
      return;
    }
    setSession(null);
    setFreshKey(null);
    setTeams([]);
    setTeamId(null);
    document.getElementById('main')?.focus();
  };

  /** Another workspace: a request page of the one left is not its, so back to the log. */
  const selectWorkspace = (id: string | null) => {
    setTeamId(id);
    if (requestOfHash()) window.location.hash = 'request-log';
  };

  const team = teams.find((t) => t.team_id === teamId);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <h1>AI Gateway console</h1>
        {session && (
          <div class="who">
            <span>
              Signed in as <b data-testid="signed-in-email">{session.email}</b>
            </span>
            <button type="button" class="secondary small" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      {session && (
        <TeamSwitcher
          teams={teams}
          selected={teamId}
          onSelect={selectWorkspace}
          onCreated={(id) => void loadTeams(id)}
          onAuthLost={onAuthLost}
        />
      )}
      {session && !team && (
        <nav aria-label="Sections" class="sections">
          <a href="#api-keys">API keys</a>
          <a href="#provider-keys">Provider keys</a>
          <a href="#usage">Usage</a>
          <a href="#request-log">Request log</a>
          <a href="#mcp">MCP</a>
          <a href="#quick-try">Quick try</a>
        </nav>
      )}
      {session && team && (
        <nav aria-label="Team sections" class="sections">
          {teamSections(team).map(([id, label]) => (
            <a key={id} href={`#${id}`}>
              {label}
            </a>
          ))}
        </nav>
      )}
      <main id="main" tabIndex={-1}>
        <ErrorText error={error} />
        {code && (
          <FinishSignIn
            code={code}
            onSignedIn={() => {
              forgetCode();
              setCode(null);
              void loadSession();
            }}
            onDiscard={() => {
              forgetCode();
              setCode(null);
            }}
          />
        )}
        {session === undefined && !code && <p>Loading…</p>}
        {session === null && !code && <SignInForm config={config} />}
        {session && invite && !code && (
          <JoinTeam
            token={invite}
            onJoined={(id) => {
              setInvite(null);
              void loadTeams(id);
            }}
            onDiscard={() => setInvite(null)}
          />
        )}
        {session && team && (
          <TeamView
            key={team.team_id}
            summary={team}
            userId={session.user_id}
            providers={config?.providers}
            requestId={requestId}
            onTeamsChanged={(select) => void loadTeams(select)}
            onAuthLost={onAuthLost}
          />
        )}
        {session && !team && requestId && <RequestDetail id={requestId} log={api} onAuthLost={onAuthLost} />}
        {session && !team && !requestId && (
          <>
            <ApiKeys maxKeys={config?.max_api_keys ?? 5} onCreated={setFreshKey} onAuthLost={onAuthLost} />
            <ProviderKeys providers={config?.providers} onAuthLost={onAuthLost} />
            <Usage refreshKey={usageVersion} onAuthLost={onAuthLost} />
            <Spend refreshKey={usageVersion} onAuthLost={onAuthLost} />
            <Budgets onAuthLost={onAuthLost} />
            <RequestLog log={api} onAuthLost={onAuthLost} keysVersion={freshKey} />
            <ProjectCapture onAuthLost={onAuthLost} />
            <Mcp onAuthLost={onAuthLost} keysVersion={freshKey} />
            <QuickTry
              lanes={config?.lanes ?? ['free']}
              freshKey={freshKey}
              onDone={() => setUsageVersion((v) => v + 1)}
            />
          </>
        )}
      </main>
      <footer class="foot">
        <a href="./docs">API reference</a> (<a href="./openapi.json">OpenAPI document</a>)
      </footer>
    </>
  );
}
