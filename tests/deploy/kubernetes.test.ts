// deploy/kubernetes/: every manifest is valid under the Kubernetes schemas
// (vendored, strict: a misspelt field fails), patches name only real fields,
// the kustomizations reference files that exist, and the objects hold the
// operational promises of docs/operations.md: probes on the admin port, the
// migration before the server, resources, non-root read-only containers,
// secrets by reference, a PodDisruptionBudget per role, CPU autoscaling of the
// API and a ServiceMonitor per role. Where kubectl is installed, the rendered
// production overlay is validated too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../core/config.js';
import { configVariables, exists, filesUnder, read, ROOT, SECRET_NAME, toolMissing, yamlDocuments, yamlFile } from './support/files.js';
import { explain, kubernetesValidators } from './support/schemas.js';

const DIR = 'deploy/kubernetes';
const ROLES = ['api', 'worker', 'consumers'] as const;
const validators = kubernetesValidators();

const isKustomization = (path: string) => /(^|\/)kustomization\.yaml$/.test(path);
const manifestFiles = filesUnder(DIR).filter((path) => path.endsWith('.yaml') && !isKustomization(path));
const kustomizations = filesUnder(DIR).filter(isKustomization);

/** Every file a kustomization lists as a patch: partial objects, checked as such. */
const patchFiles = new Set(
  kustomizations.flatMap((k) =>
    ((yamlFile(k).patches ?? []) as Array<{ path?: string }>).filter((p) => p.path).map((p) => normalize(join(dirname(k), p.path!))),
  ),
);

const documents = (path: string) => yamlDocuments(read(path));
const base = ['serviceaccount.yaml', 'configmap.yaml', 'api.yaml', 'worker.yaml', 'consumers.yaml'].flatMap((f) => documents(`${DIR}/base/${f}`));
const serviceMonitors = documents(`${DIR}/components/servicemonitors/servicemonitors.yaml`);
const job = documents(`${DIR}/migrate-job/job.yaml`)[0];
const find = (objects: any[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata?.name === name);
const config = find(base, 'ConfigMap', 'palai-config').data as Record<string, string>;
/** An object's labels once base/kustomization.yaml's `labels` are added, as kustomize renders them. */
const renderedLabels = (object: any): Record<string, string> =>
  Object.assign({}, object.metadata.labels, ...(yamlFile(`${DIR}/base/kustomization.yaml`).labels ?? []).map((l: any) => l.pairs));

/** `apiVersion/kind` of an object, as the validators key it. */
const kindOf = (object: any) => `${object.apiVersion}/${object.kind}`;

function assertValid(object: any, where: string, partial = false): void {
  const validate = partial ? validators.partial(object.apiVersion, object.kind) : validators.full(object.apiVersion, object.kind);
  assert.ok(validate, `${where}: no schema for ${kindOf(object)}; the vendored schemas cover ${validators.kinds.join(', ')}`);
  assert.ok(validate(object), `${where}: ${kindOf(object)} ${object.metadata?.name} is invalid:\n${explain(validate.errors)}`);
}

test('every manifest is valid under the strict Kubernetes schema of its kind', () => {
  assert.ok(manifestFiles.length >= 8);
  for (const path of manifestFiles.filter((p) => !patchFiles.has(p))) {
    const docs = documents(path);
    assert.ok(docs.length > 0, `${path} holds a manifest`);
    for (const object of docs) assertValid(object, path);
  }
});

test('every patch names only fields its kind has, with the right types', () => {
  assert.ok(patchFiles.size > 0);
  for (const path of patchFiles) for (const object of documents(path)) assertValid(object, path, true);
});

test('a misspelt field is a failure, not something ignored', () => {
  const deployment = structuredClone(find(base, 'Deployment', 'palai-api'));
  deployment.spec.template.spec.containers[0].livenesProbe = deployment.spec.template.spec.containers[0].livenessProbe;
  const validate = validators.full('apps/v1', 'Deployment')!;
  assert.equal(validate(deployment), false);
  assert.match(explain(validate.errors), /livenesProbe/);
});

test('every kustomization references files that exist, and its patches target objects of the base', () => {
  for (const path of kustomizations) {
    const kustomization = yamlFile(path);
    const here = dirname(path);
    for (const entry of [...(kustomization.resources ?? []), ...(kustomization.components ?? [])]) {
      const target = normalize(join(here, entry));
      assert.ok(
        exists(target.endsWith('.yaml') ? target : join(target, 'kustomization.yaml')),
        `${path}: ${entry} is a manifest or a directory with a kustomization`,
      );
    }
    for (const patch of kustomization.patches ?? []) {
      for (const object of documents(normalize(join(here, patch.path)))) {
        assert.ok(find(base, object.kind, object.metadata.name), `${path}: the patch of ${object.kind} ${object.metadata.name} has a target in base/`);
      }
    }
  }
  const app = yamlFile(`${DIR}/overlays/production/kustomization.yaml`);
  const migrate = yamlFile(`${DIR}/overlays/production/migrate/kustomization.yaml`);
  assert.deepEqual(migrate.images, app.images, 'the migration Job runs the same image as the Deployments');
  assert.equal(migrate.namespace, app.namespace);
});

test('each role runs palai serve --role <role> and migrates first, in an initContainer with the same image and settings', () => {
  for (const role of ROLES) {
    const pod = find(base, 'Deployment', `palai-${role}`).spec.template.spec;
    const [main] = pod.containers;
    assert.deepEqual(main.args, ['serve', '--role', role]);
    const [migrate] = pod.initContainers;
    assert.deepEqual(migrate.args, ['migrate'], `${role}: the initContainer runs palai migrate`);
    assert.equal(migrate.image, main.image);
    assert.deepEqual(migrate.envFrom, main.envFrom);
  }
  assert.deepEqual(job.spec.template.spec.containers[0].args, ['migrate']);
  assert.equal(job.spec.template.spec.containers[0].image, find(base, 'Deployment', 'palai-api').spec.template.spec.containers[0].image);
});

test('probes: liveness on /healthz and readiness on /readyz, on the admin port the ConfigMap sets', () => {
  const adminPort = Number(config.PALAI_ADMIN_PORT);
  for (const role of ROLES) {
    const [main] = find(base, 'Deployment', `palai-${role}`).spec.template.spec.containers;
    const admin = main.ports.find((p: any) => p.name === 'admin');
    assert.equal(admin?.containerPort, adminPort, `${role}: port admin is PALAI_ADMIN_PORT`);
    assert.deepEqual(main.livenessProbe.httpGet, { path: '/healthz', port: 'admin' });
    assert.deepEqual(main.readinessProbe.httpGet, { path: '/readyz', port: 'admin' });
  }
  const api = find(base, 'Deployment', 'palai-api').spec.template.spec.containers[0];
  assert.equal(api.ports.find((p: any) => p.name === 'http')?.containerPort, Number(config.PORT));
});

test('containers are non-root, without privileges, on a read-only root filesystem, with /tmp the only writable path', () => {
  const pods = [
    ...ROLES.map((role) => [role, find(base, 'Deployment', `palai-${role}`).spec.template.spec] as const),
    ['migrate Job', job.spec.template.spec] as const,
  ];
  for (const [name, pod] of pods) {
    assert.equal(pod.securityContext.runAsNonRoot, true, name);
    assert.notEqual(pod.securityContext.runAsUser, 0, name);
    assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault', name);
    assert.equal(pod.automountServiceAccountToken, false, `${name}: no API token in the pod`);
    for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
      const where = `${name}/${container.name}`;
      assert.equal(container.securityContext.allowPrivilegeEscalation, false, where);
      assert.equal(container.securityContext.readOnlyRootFilesystem, true, where);
      assert.deepEqual(container.securityContext.capabilities.drop, ['ALL'], where);
      assert.ok(
        container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory,
        `${where}: requests and a memory limit`,
      );
    }
    for (const mount of pod.containers.flatMap((c: any) => c.volumeMounts ?? [])) {
      const volume = pod.volumes.find((v: any) => v.name === mount.name);
      assert.ok(volume?.emptyDir, `${name}: ${mount.mountPath} is an emptyDir`);
    }
  }
});

test('a stopping pod gets longer than PALAI_SHUTDOWN_GRACE_SECONDS to hand its work back', () => {
  const grace = Number(config.PALAI_SHUTDOWN_GRACE_SECONDS);
  for (const role of ROLES) {
    const pod = find(base, 'Deployment', `palai-${role}`).spec.template.spec;
    const preStop = Number(pod.containers[0].lifecycle?.preStop?.exec?.command?.[1] ?? 0);
    assert.ok(pod.terminationGracePeriodSeconds >= preStop + grace + 5, `${role}: terminationGracePeriodSeconds ${pod.terminationGracePeriodSeconds}`);
  }
});

test('secrets by reference: pods read the Secret palai-secrets, which no kustomization creates and no manifest spells out', () => {
  for (const role of ROLES) {
    const [main] = find(base, 'Deployment', `palai-${role}`).spec.template.spec.containers;
    assert.deepEqual(main.envFrom, [{ configMapRef: { name: 'palai-config' } }, { secretRef: { name: 'palai-secrets' } }]);
    for (const variable of main.env ?? [])
      assert.ok(!SECRET_NAME.test(variable.name) || variable.valueFrom?.secretKeyRef, `${role}: ${variable.name} comes from a Secret`);
  }
  for (const path of manifestFiles.filter((p) => !p.endsWith('secret.example.yaml'))) {
    for (const object of documents(path)) assert.notEqual(object.kind, 'Secret', `${path} creates a Secret`);
  }
  for (const path of kustomizations) {
    for (const entry of yamlFile(path).resources ?? []) assert.ok(!String(entry).includes('secret'), `${path} includes ${entry}`);
  }
  const example = documents(`${DIR}/secret.example.yaml`)[0];
  assert.equal(example.metadata.name, 'palai-secrets');
  for (const key of Object.keys(config)) assert.ok(!SECRET_NAME.test(key), `the ConfigMap holds ${key}, a secret`);
});

test('the ConfigMap holds settings the configuration loader reads and accepts', () => {
  const known = configVariables();
  for (const key of Object.keys(config)) assert.ok(known.has(key), `${key} is a setting core/config.ts reads`);
  const loaded = loadConfig({ ...config, PALAI_DATABASE_URL: 'postgres://palai@db:5432/palai' });
  assert.equal(loaded.host, '0.0.0.0');
  const overlay = documents(`${DIR}/overlays/production/patches/config.yaml`)[0].data;
  for (const key of Object.keys(overlay)) assert.ok(known.has(key), `overlay: ${key} is a setting core/config.ts reads`);
  loadConfig({ ...config, ...overlay });
});

test('each role has a PodDisruptionBudget and a ServiceMonitor scraping /metrics through a Service on the admin port', () => {
  const services = base.filter((o) => o.kind === 'Service');
  for (const role of ROLES) {
    const deployment = find(base, 'Deployment', `palai-${role}`);
    const podLabels = deployment.spec.template.metadata.labels;
    const selects = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => podLabels[k] === v);
    assert.deepEqual(
      deployment.spec.selector.matchLabels,
      find(base, 'PodDisruptionBudget', `palai-${role}`).spec.selector.matchLabels,
      `${role}: the PDB covers its pods`,
    );
    const monitor = find(serviceMonitors, 'ServiceMonitor', `palai-${role}`) ?? assert.fail(`no ServiceMonitor for ${role}`);
    assert.deepEqual(
      monitor.spec.endpoints.map((e: any) => [e.port, e.path]),
      [['admin', '/metrics']],
    );
    const service = services.find(
      (s) => selects(s.spec.selector) && Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => renderedLabels(s)[k] === v),
    );
    assert.ok(service, `${role}: the ServiceMonitor selects a Service of its pods`);
    assert.ok(
      service.spec.ports.some((p: any) => p.name === 'admin' && p.targetPort === 'admin'),
      `${role}: the Service exposes the admin port`,
    );
  }
});

test('the API scales on CPU (autoscaling/v2), owns no fixed replica count, and a Service routes to its http port', () => {
  const hpa = find(base, 'HorizontalPodAutoscaler', 'palai-api');
  assert.equal(hpa.apiVersion, 'autoscaling/v2');
  assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'palai-api' });
  assert.deepEqual(
    hpa.spec.metrics.map((m: any) => [m.type, m.resource?.name]),
    [['Resource', 'cpu']],
  );
  assert.ok(hpa.spec.minReplicas >= 2);
  const deployment = find(base, 'Deployment', 'palai-api');
  assert.equal(deployment.spec.replicas, undefined, 'the autoscaler, not kubectl apply, sets the count');
  assert.ok(deployment.spec.template.spec.containers[0].resources.requests.cpu, 'CPU utilisation needs a CPU request');
  const service = find(base, 'Service', 'palai-api');
  assert.deepEqual(service.spec.selector, deployment.spec.selector.matchLabels);
  assert.ok(service.spec.ports.some((p: any) => p.name === 'http' && p.targetPort === 'http'));
});

const kubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;

test(
  'the production overlay renders (kubectl kustomize) to valid objects in one namespace, all on one image',
  { skip: toolMissing('kubectl', kubectl) },
  () => {
    for (const overlay of ['overlays/production', 'overlays/production/migrate']) {
      const result = spawnSync('kubectl', ['kustomize', join(DIR, overlay)], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(result.status, 0, `kubectl kustomize ${overlay}:\n${result.stderr}`);
      const rendered = yamlDocuments(result.stdout);
      for (const object of rendered) {
        assertValid(object, `${overlay} (rendered)`);
        if (object.kind !== 'Namespace') assert.equal(object.metadata.namespace, 'palai', `${object.kind} ${object.metadata.name} is in the namespace`);
      }
      const images = new Set(
        rendered
          .filter((o) => o.spec?.template)
          .flatMap((o) => [...(o.spec.template.spec.initContainers ?? []), ...o.spec.template.spec.containers].map((c: any) => c.image)),
      );
      assert.deepEqual([...images], ['registry.example.com/palai:0.1.0'], `${overlay}: one image, from the overlay`);
      if (overlay === 'overlays/production') {
        const kinds = rendered.map((o) => o.kind).sort();
        for (const kind of [
          'Deployment',
          'Deployment',
          'Deployment',
          'PodDisruptionBudget',
          'ServiceMonitor',
          'HorizontalPodAutoscaler',
          'ConfigMap',
          'Namespace',
        ])
          assert.ok(kinds.includes(kind), kind);
        assert.equal(find(rendered, 'HorizontalPodAutoscaler', 'palai-api').spec.minReplicas, 3, "the overlay's patches apply");
      }
    }
  },
);
