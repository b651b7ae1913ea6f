// The outbox consumer A2A push notifications go through (push-configs.ts), in a
// module of its own so the lazily loaded consumer is named without the A2A SDK.
export const PUSH_CONSUMER = 'a2a_push';
