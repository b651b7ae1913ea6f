// The transport the adapter tests give their model requests: the kernel's
// egress-guarded fetch, allowing the loopback address the wire servers listen on.
import { createEgressFetch } from '../../../core/egress/guarded-fetch.js';

export const testTransport = createEgressFetch({ allowHosts: ['127.0.0.1'] });
