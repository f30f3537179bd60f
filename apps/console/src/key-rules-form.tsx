import type { ApiKeyRules, ApiKeySummary } from '@platform/contract';
import { formatDate, formatNumber } from './format';

/** The rule fields as typed: lists as text (commas or lines), numbers as text, the expiry as local time. */
export type RulesDraft = {
  lanes: string;
  models: string;
  rpm: string;
  tpm: string;
  concurrency: string;
  expires: string;
};

export const EMPTY_RULES: RulesDraft = {
  lanes: '',
  models: '',
  rpm: '',
  tpm: '',
  concurrency: '',
  expires: '',
};

const list = (text: string) => text.split(/[\s,]+/).filter((item) => item !== '');
const whole = (text: string) => (text.trim() === '' ? undefined : Number(text.trim()));

/** `datetime-local` wants local time without a zone. */
function localInput(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The draft of a key's rules in force (for editing them). */
export function draftOf(key: Pick<ApiKeySummary, 'rules' | 'expires_at'>): RulesDraft {
  const r = key.rules ?? {};
  return {
    lanes: (r.lanes ?? []).join(', '),
    models: (r.models ?? []).join('\n'),
    rpm: r.requests_per_minute === undefined ? '' : String(r.requests_per_minute),
    tpm: r.tokens_per_minute === undefined ? '' : String(r.tokens_per_minute),
    concurrency: r.concurrent_requests === undefined ? '' : String(r.concurrent_requests),
    expires: key.expires_at ? localInput(key.expires_at) : '',
  };
}

/** The draft as the API takes it; `rules` undefined when no rule is set. The gateway checks the values. */
export function rulesOf(draft: RulesDraft): {
  rules: ApiKeyRules | undefined;
  expires_at: string | undefined;
} {
  const rules: ApiKeyRules = {};
  const lanes = list(draft.lanes);
  const models = list(draft.models);
  if (lanes.length > 0) rules.lanes = lanes;
  if (models.length > 0) rules.models = models;
  const rpm = whole(draft.rpm);
  const tpm = whole(draft.tpm);
  const concurrency = whole(draft.concurrency);
  if (rpm !== undefined) rules.requests_per_minute = rpm;
  if (tpm !== undefined) rules.tokens_per_minute = tpm;
  if (concurrency !== undefined) rules.concurrent_requests = concurrency;
  return {
    rules: Object.keys(rules).length > 0 ? rules : undefined,
    expires_at: draft.expires ? new Date(draft.expires).toISOString() : undefined,
  };
}

/** A key's rules in a few words ("any" when it has none). */
export function describeRules(key: Pick<ApiKeySummary, 'rules' | 'expires_at'>): string {
  const r = key.rules ?? {};
  const parts = [
    r.lanes && `lanes ${r.lanes.join(', ')}`,
    r.models && `models ${r.models.join(', ')}`,
    r.requests_per_minute !== undefined && `${formatNumber(r.requests_per_minute)} requests/min`,
    r.tokens_per_minute !== undefined && `${formatNumber(r.tokens_per_minute)} tokens/min`,
    r.concurrent_requests !== undefined && `${formatNumber(r.concurrent_requests)} at once`,
    key.expires_at && `expires ${formatDate(key.expires_at)}`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(' · ') : 'no rules';
}

/** The rule fields of a key, labelled; `prefix` keeps the ids unique when two forms are on the page. */
export function RulesFields(props: {
  prefix: string;
  draft: RulesDraft;
  onDraft: (draft: RulesDraft) => void;
}) {
  const { prefix, draft } = props;
  const set = (field: keyof RulesDraft) => (e: Event) =>
    props.onDraft({ ...draft, [field]: (e.currentTarget as HTMLInputElement).value });
  return (
    <fieldset class="rules">
      <legend>Rules (each empty one does not restrict)</legend>
      <div class="two-cols">
        <div>
          <label for={`${prefix}-lanes`}>Allowed lanes</label>
          <input
            id={`${prefix}-lanes`}
            value={draft.lanes}
            onInput={set('lanes')}
            placeholder="free, standard"
          />
        </div>
        <div>
          <label for={`${prefix}-expires`}>Expires</label>
          <input
            id={`${prefix}-expires`}
            type="datetime-local"
            value={draft.expires}
            onInput={set('expires')}
          />
        </div>
      </div>
      <label for={`${prefix}-models`}>Allowed models (one per line: provider/model or a model id)</label>
      <textarea id={`${prefix}-models`} rows={3} value={draft.models} onInput={set('models')} />
      <div class="three-cols">
        <div>
          <label for={`${prefix}-rpm`}>Requests per minute</label>
          <input
            id={`${prefix}-rpm`}
            inputMode="numeric"
            pattern="[0-9]*"
            value={draft.rpm}
            onInput={set('rpm')}
          />
        </div>
        <div>
          <label for={`${prefix}-tpm`}>Tokens per minute</label>
          <input
            id={`${prefix}-tpm`}
            inputMode="numeric"
            pattern="[0-9]*"
            value={draft.tpm}
            onInput={set('tpm')}
          />
        </div>
        <div>
          <label for={`${prefix}-concurrency`}>Requests at once</label>
          <input
            id={`${prefix}-concurrency`}
            inputMode="numeric"
            pattern="[0-9]*"
            value={draft.concurrency}
            onInput={set('concurrency')}
          />
        </div>
      </div>
    </fieldset>
  );
}
