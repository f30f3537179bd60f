import { useState } from 'preact/hooks';
import { api } from './api';
import { BusyButton, ErrorText, onSubmit, useAction, useLoad } from './ui';

/**
 * Per project: keep prompts and answers in the request log (off by default).
 * The gateway redacts secrets and cuts each text; only the project's owner
 * reads them.
 */
export function ProjectCapture(props: { onAuthLost: (err: unknown) => void }) {
  const [project, setProject] = useState('');
  const [capture, setCapture] = useState(true);
  const [saved, setSaved] = useState<string | null>(null);
  const { onAuthLost } = props;
  const { data, error, load } = useLoad(() => api.listProjectSettings(), onAuthLost);
  const save = useAction(
    async (projectId: string, on: boolean) => {
      const done = await api.setProjectSettings({ project_id: projectId, capture_content: on });
      setSaved(`${done.project_id}: capture ${done.capture_content ? 'on' : 'off'}.`);
      await load();
    },
    { onError: onAuthLost },
  );
  const capturing = (data ?? []).filter((p) => p.capture_content);

  return (
    <section class="card" id="project-capture" aria-labelledby="project-capture-title">
      <h2 id="project-capture-title">Prompt and answer capture</h2>
      <p class="hint">
        Off by default. On for a project, the request log keeps each request's prompt and answer, with secrets
        redacted and each cut at 16,384 characters, for as long as the log keeps the request. Only you can
        read them.
      </p>
      <ErrorText error={error} />
      {capturing.length === 0 ? (
        <p>No project captures prompts and answers.</p>
      ) : (
        <ul class="plain-list" data-testid="capturing-projects">
          {capturing.map((p) => (
            <li key={p.project_id} data-project={p.project_id}>
              <span>{p.project_id}</span>
              <button
                type="button"
                class="secondary small"
                onClick={() => void save.run(p.project_id, false)}
                disabled={save.busy}
              >
                Stop capturing
              </button>
            </li>
          ))}
        </ul>
      )}
      <form
        onSubmit={onSubmit(() => save.run(project.trim(), capture))}
        aria-label="Set capture for a project"
      >
        <label>
          Project id{' '}
          <input
            required
            maxLength={128}
            value={project}
            onInput={(e) => setProject(e.currentTarget.value)}
          />
        </label>
        <label>
          <input type="checkbox" checked={capture} onChange={(e) => setCapture(e.currentTarget.checked)} />{' '}
          Capture prompts and answers
        </label>
        <BusyButton busy={save.busy} busyLabel="Saving…">
          Save capture setting
        </BusyButton>
      </form>
      <ErrorText error={save.error} />
      {saved && !save.error && (
        <p class="hint" role="status">
          {saved}
        </p>
      )}
    </section>
  );
}
