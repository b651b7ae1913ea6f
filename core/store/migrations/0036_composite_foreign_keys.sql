-- Fewer foreign-key checks on a response's hot path, none of them weaker. Each
-- check is a query that locks the row it finds (FOR KEY SHARE), and the rows
-- every response of a project checked (the project's, its agent's and the
-- agent's revision's) were locked by concurrent transactions at once, which
-- made a multixact and a WAL record each time (2.3 multixacts a response at 16
-- clients). An admission made five checks and the end two; now two and one.
--
-- Each key names its parent with the parent's own parents, so one check says
-- what several did, and more: a journal row's response is one of the journal
-- row's project; a response's revision is one of its agent's, and its agent
-- one of its project's (the revision's key to the agent says so). The checks
-- of the project and of the agent are the revision's and the agent's own, made
-- once when those rows are written.
--
-- (project_id, id) was already indexed on responses and agents; those indexes
-- become unique (they are: id is each table's primary key) so keys can name
-- them. A database whose rows disagree (a revision of another project's agent)
-- stops this migration at the constraint that says so.
DROP INDEX responses_project;
CREATE UNIQUE INDEX responses_project ON responses (project_id, id);
DROP INDEX agents_project;
CREATE UNIQUE INDEX agents_project ON agents (project_id, id);
CREATE UNIQUE INDEX agent_revisions_owner ON agent_revisions (project_id, agent_id, id);

ALTER TABLE agent_revisions
  DROP CONSTRAINT agent_revisions_project_id_fkey,
  DROP CONSTRAINT agent_revisions_agent_id_fkey,
  ADD CONSTRAINT agent_revisions_agent_fkey FOREIGN KEY (project_id, agent_id) REFERENCES agents (project_id, id);

ALTER TABLE responses
  DROP CONSTRAINT responses_project_id_fkey,
  DROP CONSTRAINT responses_agent_id_fkey,
  DROP CONSTRAINT responses_agent_revision_id_fkey,
  ADD CONSTRAINT responses_agent_revision_fkey FOREIGN KEY (project_id, agent_id, agent_revision_id)
    REFERENCES agent_revisions (project_id, agent_id, id);

ALTER TABLE response_journal
  DROP CONSTRAINT response_events_project_id_fkey,
  DROP CONSTRAINT response_events_response_id_fkey,
  ADD CONSTRAINT response_journal_response_fkey FOREIGN KEY (project_id, response_id) REFERENCES responses (project_id, id);
