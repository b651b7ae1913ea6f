// Small shared pieces of markup.
import type { ComponentChildren } from 'preact';

/** A problem of the page, announced to screen readers as it appears. */
export function ErrorAlert({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {error}
    </p>
  );
}

/** Tables scroll sideways inside this on a narrow screen, not the page. */
export function TableWrap({ children, label }: { children: ComponentChildren; label?: string }) {
  return (
    <div class="table-wrap" role={label ? 'region' : undefined} aria-label={label} tabIndex={label ? 0 : undefined}>
      <table>{children}</table>
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return <p class="muted">Loading {what}…</p>;
}

export function Json({ value, label }: { value: string; label?: string }) {
  return (
    <pre class="json" aria-label={label}>
      {value}
    </pre>
  );
}

/** A definition list from [term, description] pairs. */
export function Facts({ facts }: { facts: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {facts.map(([term, description]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{description}</dd>
        </div>
      ))}
    </dl>
  );
}
