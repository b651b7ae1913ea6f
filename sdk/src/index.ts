// @palai/sdk: the typed client of Palai's REST API (docs/sdk.md).
export { createPalai, type Answer, type Palai, type PalaiOptions, type WaitOptions } from './client.js';
export { PalaiApiError, PalaiConnectionError, problemSlug } from './errors.js';
export type { RetryOptions } from './retry.js';
export { SETTLED_STATUSES, type FollowOptions, type StreamCreateOptions } from './stream.js';
export type { components, operations, paths } from './generated/openapi.js';
export type * from './generated/schemas.js';
