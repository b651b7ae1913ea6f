-- Project names become unique, so an operator can name a project wherever an id
-- is accepted (`--project acme`) without ambiguity.
--
-- A store may already hold projects sharing a name. The oldest keeps it; each
-- later one gets its own id appended ("acme-proj_01j9…"), unique because ids are,
-- so the index below builds on any existing store. Ids, keys and data are untouched.

UPDATE projects AS p
   SET name = p.name || '-' || p.id
  FROM (SELECT id, row_number() OVER (PARTITION BY name ORDER BY created_at, id) AS n FROM projects) AS ranked
 WHERE ranked.id = p.id AND ranked.n > 1;

CREATE UNIQUE INDEX projects_name ON projects (name);
