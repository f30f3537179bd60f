import type {
  ComponentChildren,
  ComponentProps,
  InputHTMLAttributes,
  LooseInputHTMLAttributes,
  Ref,
} from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { errorWords } from './api';

/**
 * A section of the page titled by its heading (`id`-title). With `headingRef`
 * the heading can take focus, for dialogs that close onto it.
 */
export function Card(props: {
  id: string;
  title: string;
  headingRef?: Ref<HTMLHeadingElement>;
  children: ComponentChildren;
}) {
  const titleId = `${props.id}-title`;
  return (
    <section class="card" id={props.id} aria-labelledby={titleId}>
      <h2 id={titleId} ref={props.headingRef} tabIndex={props.headingRef ? -1 : undefined}>
        {props.title}
      </h2>
      {props.children}
    </section>
  );
}

/** An error in words, announced at once; nothing at all while there is none. */
export function ErrorText(props: { error: string | null; id?: string }) {
  if (!props.error) return null;
  return (
    <p class="error" role="alert" id={props.id}>
      {props.error}
    </p>
  );
}

/** A button that is disabled and says `busyLabel` while its action runs. */
export function BusyButton(
  props: Omit<ComponentProps<'button'>, 'ref'> & {
    busy: boolean;
    busyLabel: string;
    buttonRef?: Ref<HTMLButtonElement>;
  },
) {
  const { busy, busyLabel, buttonRef, children, type = 'submit', ...rest } = props;
  return (
    <button type={type} ref={buttonRef} {...rest} disabled={busy}>
      {busy ? busyLabel : children}
    </button>
  );
}

/** A labelled text input whose value lives in the caller's state. */
export function Field(
  props: Omit<LooseInputHTMLAttributes<HTMLInputElement>, 'id' | 'value' | 'onInput' | 'label'> & {
    id: string;
    label: ComponentChildren;
    value: string;
    onValue: (value: string) => void;
  },
) {
  const { id, label, onValue, ...rest } = props;
  // The caller's attributes as given; preact's stricter input type pairs each `type` with the roles it allows.
  const attributes = rest as InputHTMLAttributes<HTMLInputElement>;
  return (
    <>
      <label for={id}>{label}</label>
      <input id={id} {...attributes} onInput={(e) => onValue(e.currentTarget.value)} />
    </>
  );
}

/**
 * The column heads of a `Table`: a plain name, or one set right (numbers), seen by
 * screen readers only, or `wide`: shown on wide screens only (its cells carry
 * class "wide" too), so what a phone needs fits without scrolling sideways.
 */
export type Column = string | { label: string; numeric?: boolean; hidden?: boolean; wide?: boolean };

/** A scrollable table with a caption for screen readers and `scope="col"` heads; `children` are its rows. */
export function Table(props: {
  caption: string;
  columns: Column[];
  testId?: string;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table data-testid={props.testId}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => {
              const { label, numeric, hidden, wide } =
                typeof column === 'string' ? { label: column } : column;
              const classes = [numeric && 'num', wide && 'wide'].filter(Boolean).join(' ');
              return (
                <th key={label} scope="col" class={classes || undefined}>
                  {hidden ? <span class="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * The state of one user action: `run` marks it busy, clears the last error,
 * runs `work`, and on failure keeps the error in words (and hands the error
 * to `onError`, e.g. to notice a lost session).
 */
export function useAction<A extends unknown[]>(
  work: (...args: A) => Promise<void>,
  options: { words?: (err: unknown) => string; onError?: (err: unknown) => void } = {},
) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (...args: A): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await work(...args);
    } catch (err) {
      setError((options.words ?? errorWords)(err));
      options.onError?.(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/**
 * Data read from the API on mount, whenever `refresh` changes and on `load()`. A failed read
 * keeps the last data, shows its words in `error` and is handed to `onError` (a lost session).
 */
export function useLoad<T>(read: () => Promise<T>, onError: (err: unknown) => void, refresh?: unknown) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reader = useRef(read);
  reader.current = read;
  const load = useCallback(async () => {
    try {
      const next = await reader.current();
      setData(() => next);
      setError(null);
    } catch (err) {
      setError(errorWords(err));
      onError(err);
    }
  }, [onError]);
  useEffect(() => {
    void load();
  }, [load, refresh]);
  return { data, error, load };
}

/** A form's submit handler: no page load, just `run`. */
export function onSubmit(run: () => Promise<void>) {
  return (event: Event) => {
    event.preventDefault();
    void run();
  };
}
