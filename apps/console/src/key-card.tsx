import type { ApiKeySummary, CreateApiKeyRequest, CreateApiKeyResponse } from '@platform/contract';
import { type ComponentChildren, Fragment } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { TeamApi } from './api';
import { ConfirmDialog } from './dialog';
import { formatDate } from './format';
import { NewKeyDialog } from './new-key-dialog';
import { BusyButton, Card, type Column, ErrorText, Field, onSubmit, Table, useAction, useLoad } from './ui';

const NAME_RULE = /^[A-Za-z0-9]{1,64}$/;

/** The key routes of the personal API (`api`) or a team's (`api.team(id)`): the same names on both. */
export type KeysApi = Pick<TeamApi, 'listKeys' | 'createKey' | 'revokeKey'>;

/** A column of the key table between Prefix and Status: its head and a key's cell. */
export type KeyColumn = { head: Column; cell: (k: ApiKeySummary) => ComponentChildren };

export const CREATED_COLUMN: KeyColumn = {
  head: { label: 'Created', wide: true },
  cell: (k) => <td class="wide">{formatDate(k.created_at)}</td>,
};

/** The create form: its name field, its button, and what the caller adds to it. */
export type KeyForm = {
  /** The name field's id; its error is `${id}-error`. */
  id: string;
  label: string;
  button: string;
  /** `top`: a one-line form above the table; `bottom`: a titled form below it. */
  placement: 'top' | 'bottom';
  /** The form's accessible name and (bottom) its heading. */
  title?: string;
  /** Further fields (e.g. a key's rules). */
  fields?: ComponentChildren;
  /** Further request fields, read when the form is sent; may throw to refuse it in words. */
  body?: () => Omit<CreateApiKeyRequest, 'name' | 'scope'>;
  /** Called after a key is created, e.g. to clear the further fields. */
  onCreated?: (key: CreateApiKeyResponse) => void;
};

/**
 * A card listing keys (name, prefix, the caller's columns, status) with Revoke
 * behind a confirmation, and a form to create one whose plaintext is shown once
 * (NewKeyDialog): the personal API keys and a team's keys. `form` null: the
 * caller may not create or revoke (`readOnly` says so); `rowActions` go before
 * Revoke; `refresh` re-reads the list when it changes.
 */
export function KeyCard(props: {
  id: string;
  title: string;
  keysApi: KeysApi;
  onAuthLost: (err: unknown) => void;
  intro: (keys: ApiKeySummary[] | null) => ComponentChildren;
  table: { caption: string; testId?: string; empty: string; columns: KeyColumn[] };
  form: KeyForm | null;
  readOnly?: ComponentChildren;
  rowActions?: (k: ApiKeySummary) => ComponentChildren;
  refresh?: unknown;
  children?: ComponentChildren;
}) {
  const { keysApi, onAuthLost, form, table } = props;
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreateApiKeyResponse | null>(null);
  const [revoking, setRevoking] = useState<ApiKeySummary | null>(null);
  const createButton = useRef<HTMLButtonElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  const { data: keys, error: loadError, load } = useLoad(() => keysApi.listKeys(), onAuthLost, props.refresh);

  const creating = useAction(
    async () => {
      const wanted = name.trim();
      if (!NAME_RULE.test(wanted)) throw new Error('A key name is 1 to 64 letters or digits (no spaces).');
      const key = await keysApi.createKey({ name: wanted, scope: 'ai', ...form?.body?.() });
      setCreated(key);
      setName('');
      form?.onCreated?.(key);
      await load();
    },
    { onError: onAuthLost },
  );
  const revokeAction = useAction(
    async (key: ApiKeySummary) => {
      await keysApi.revokeKey({ key_id: key.key_id });
      setRevoking(null);
      await load();
    },
    { onError: onAuthLost },
  );

  const errorId = form ? `${form.id}-error` : undefined;
  const formNode = form && (
    <form
      onSubmit={onSubmit(creating.run)}
      class={form.placement === 'top' ? 'inline-form' : undefined}
      aria-label={form.title}
    >
      {form.placement === 'bottom' && form.title && <h3>{form.title}</h3>}
      <Field
        id={form.id}
        label={form.label}
        name="name"
        autocomplete="off"
        maxLength={64}
        value={name}
        onValue={setName}
        aria-describedby={creating.error ? errorId : undefined}
      />
      {form.fields}
      <BusyButton buttonRef={createButton} busy={creating.busy} busyLabel="Creating…">
        {form.button}
      </BusyButton>
      {form.placement === 'bottom' && <ErrorText error={creating.error} id={errorId} />}
    </form>
  );

  return (
    <Card id={props.id} title={props.title} headingRef={heading}>
      {props.intro(keys)}
      {form?.placement === 'top' && (
        <>
          {formNode}
          <ErrorText error={creating.error} id={errorId} />
        </>
      )}
      <ErrorText error={loadError} />
      {keys && keys.length === 0 && <p>{table.empty}</p>}
      {keys && keys.length > 0 && (
        <Table
          testId={table.testId}
          caption={table.caption}
          columns={[
            'Name',
            { label: 'Prefix', wide: true },
            ...table.columns.map((c) => c.head),
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
              {table.columns.map((c) => (
                <Fragment key={typeof c.head === 'string' ? c.head : c.head.label}>{c.cell(k)}</Fragment>
              ))}
              <td>{k.status}</td>
              <td>
                {form && k.status === 'active' && (
                  <div class="row-actions">
                    {props.rowActions?.(k)}
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
      {form?.placement === 'bottom' ? formNode : !form && props.readOnly}
      {created && (
        <NewKeyDialog
          created={created}
          onClose={() => setCreated(null)}
          returnFocus={() => createButton.current}
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
      {props.children}
    </Card>
  );
}
