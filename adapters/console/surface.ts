// The web console as a module of the hub: its built files under /console on
// the API port (PALAI_CONSOLE=false leaves it out). It is a client of the REST
// API like any other, signed in with a project key: this module serves files
// and holds nothing.
import type { KernelApi, SurfaceModule } from '../../core/api/index.js';
import { consoleFiles } from './files.js';
import { consoleRouter } from './static.js';

export function consoleSurface(api: Pick<KernelApi, 'config'>): SurfaceModule {
  if (!api.config.console) return { name: 'console' };
  return { name: 'console', http: [{ path: '/console', handler: consoleRouter(consoleFiles()) }] };
}
