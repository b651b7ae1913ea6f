// Hash routing (#/runs, #/runs/<id>, …): the hub serves one index.html at
// /console/, so the route lives after the # and needs no server support.
import { useEffect, useState } from 'preact/hooks';

export const PAGES = ['runs', 'waiting', 'agents', 'sessions', 'deliveries', 'nodes', 'objectives'] as const;
export type Page = (typeof PAGES)[number];

export interface Route {
  page: Page;
  /** The object a detail page shows (#/runs/<id>). */
  id?: string;
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part; // A malformed escape: taken as written.
  }
}

export function parseHash(hash: string): Route | null {
  const path = hash.replace(/^#\/?/, '');
  const [page, ...rest] = path.split('/');
  if (!(PAGES as readonly string[]).includes(page)) return null;
  const id = rest.join('/');
  return id ? { page: page as Page, id: decode(id) } : { page: page as Page };
}

export function href(page: Page, id?: string): string {
  return id === undefined ? `#/${page}` : `#/${page}/${encodeURIComponent(id)}`;
}

export function navigate(page: Page, id?: string): void {
  window.location.hash = href(page, id);
}

export function useRoute(): Route {
  const read = (): Route => {
    const route = parseHash(window.location.hash);
    // An unknown or empty route goes to the runs, without a history entry.
    if (!route) window.history.replaceState(null, '', href('runs'));
    return route ?? { page: 'runs' };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
