// The shell: sign-in when there is no key, else the header, the main
// navigation and the page of the current route.
import { useEffect, useRef } from 'preact/hooks';
import { signOut, useSignedIn } from './api';
import { AgentPage, AgentsPage } from './Agents';
import { DeliveriesPage } from './Deliveries';
import { NodesPage } from './Nodes';
import { ObjectivePage, ObjectivesPage } from './Objectives';
import { href, useRoute, type Page, type Route } from './router';
import { RunPage } from './Run';
import { RunsPage } from './Runs';
import { SessionPage, SessionsPage } from './Sessions';
import { SignIn } from './SignIn';
import { WaitingPage } from './Waiting';

const NAV: [Page, string][] = [
  ['runs', 'Runs'],
  ['waiting', 'Waiting'],
  ['agents', 'Agents'],
  ['sessions', 'Sessions'],
  ['deliveries', 'Deliveries'],
  ['nodes', 'Nodes'],
  ['objectives', 'Objectives'],
];

function PageFor({ route }: { route: Route }) {
  const { page, id } = route;
  switch (page) {
    case 'runs':
      return id ? <RunPage id={id} /> : <RunsPage />;
    case 'waiting':
      return <WaitingPage />;
    case 'agents':
      return id ? <AgentPage id={id} /> : <AgentsPage />;
    case 'sessions':
      return id ? <SessionPage id={id} /> : <SessionsPage />;
    case 'deliveries':
      return <DeliveriesPage />;
    case 'nodes':
      return <NodesPage />;
    case 'objectives':
      return id ? <ObjectivePage id={id} /> : <ObjectivesPage />;
  }
}

function Shell() {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  const routeKey = `${route.page}/${route.id ?? ''}`;
  const label = NAV.find(([page]) => page === route.page)?.[1] ?? '';

  // After a navigation, focus moves to the new page's heading, so a keyboard or
  // screen reader user starts there rather than at the link they left.
  useEffect(() => {
    document.title = `${route.id ?? label} · Palai console`;
    if (first.current) {
      first.current = false;
      return;
    }
    const heading = main.current?.querySelector('h1');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus();
    }
  }, [routeKey]);

  return (
    <>
      <header class="site-header">
        <span class="brand">Palai console</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([page, text]) => (
              <li key={page}>
                <a href={href(page)} aria-current={route.page === page ? 'page' : undefined}>
                  {text}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <button type="button" class="sign-out" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" ref={main}>
        {/* Keyed by the route: a page's state and timers end when it is left. */}
        <PageFor key={routeKey} route={route} />
      </main>
    </>
  );
}

export function App() {
  const signedIn = useSignedIn();
  return signedIn ? <Shell /> : <SignIn />;
}
