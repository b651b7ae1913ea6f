-- An approval prompt is recorded before it is posted (bots/slack/projection.ts),
-- so a click that arrives before Slack has answered the post is still a known
-- request. Until that answer is saved the prompt has no message_ts; a decision
-- made in that window rewrites the message the click came from.
ALTER TABLE slack_prompts ALTER COLUMN message_ts DROP NOT NULL;
