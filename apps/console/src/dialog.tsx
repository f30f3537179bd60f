import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import { BusyButton, ErrorText } from './ui';

/**
 * A modal built on the native <dialog>: the browser traps focus inside it,
 * Escape closes it, and the page behind is inert. When it closes, focus goes
 * back to `returnFocus` (or to whatever had it before it opened).
 */
export function Modal(props: {
  title: string;
  onClose: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
  children: ComponentChildren;
  role?: 'dialog' | 'alertdialog';
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // The latest callbacks, so the effect below runs once per opening.
  const latest = useRef(props);
  latest.current = props;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    const closed = () => latest.current.onClose();
    dialog.addEventListener('close', closed);
    return () => {
      dialog.removeEventListener('close', closed);
      if (dialog.open) dialog.close();
      // After the re-render that removed the dialog, so the element is in place.
      setTimeout(() => (latest.current.returnFocus?.() ?? opener)?.focus(), 0);
    };
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={titleId} role={props.role}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** "Are you sure?" with a named action; the cancel button has focus first, so Enter does no harm. */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** The confirmed action's state (see `useAction`). */
  action: { busy: boolean; error: string | null };
  onConfirm: () => void;
  onCancel: () => void;
  returnFocus?: () => HTMLElement | null | undefined;
}) {
  return (
    <Modal title={props.title} onClose={props.onCancel} returnFocus={props.returnFocus} role="alertdialog">
      {props.children}
      <ErrorText error={props.action.error} />
      <div class="actions">
        <button type="button" autofocus onClick={props.onCancel}>
          Cancel
        </button>
        <BusyButton
          type="button"
          class="danger"
          busy={props.action.busy}
          busyLabel="Working…"
          onClick={props.onConfirm}
        >
          {props.confirmLabel}
        </BusyButton>
      </div>
    </Modal>
  );
}
