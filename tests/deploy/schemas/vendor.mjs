#!/usr/bin/env node
// Regenerates the schemas the deploy tests validate against, from packages of
// the npm registry (README.md beside this file says which and why). Needs the
// registry, so it is run by hand when a pinned version changes, never by the
// tests; the files it writes are committed and never edited by hand.
//
//   node tests/deploy/schemas/vendor.mjs
//
// - compose-spec.json: the Compose Specification's schema, copied unchanged.
// - kubernetes-strict.json: the definitions reachable from the kinds our
//   manifests use, lifted from kubernetes-models (which generates them from the
//   Kubernetes OpenAPI document), with `additionalProperties: false` added to
//   every object that lists its properties, as kubeconform's strict schemas do,
//   so a misspelt field fails instead of being ignored.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

const PACKAGES = {
  compose: 'dclint@3.1.0',
  kubernetes: 'kubernetes-models@4.1.0',
  apimachinery: '@kubernetes-models/apimachinery@1.2.2',
  prometheusOperator: '@kubernetes-models/prometheus-operator@4.0.0',
};

/** The kinds the manifests under deploy/kubernetes use: apiVersion/kind → the definition that describes it. */
const KINDS = {
  'v1/ConfigMap': ['kubernetes', '_schemas/IoK8sApiCoreV1ConfigMap.js', 'io.k8s.api.core.v1.ConfigMap'],
  'v1/Namespace': ['kubernetes', '_schemas/IoK8sApiCoreV1Namespace.js', 'io.k8s.api.core.v1.Namespace'],
  'v1/Secret': ['kubernetes', '_schemas/IoK8sApiCoreV1Secret.js', 'io.k8s.api.core.v1.Secret'],
  'v1/Service': ['kubernetes', '_schemas/IoK8sApiCoreV1Service.js', 'io.k8s.api.core.v1.Service'],
  'v1/ServiceAccount': ['kubernetes', '_schemas/IoK8sApiCoreV1ServiceAccount.js', 'io.k8s.api.core.v1.ServiceAccount'],
  'apps/v1/Deployment': ['kubernetes', '_schemas/IoK8sApiAppsV1Deployment.js', 'io.k8s.api.apps.v1.Deployment'],
  'batch/v1/Job': ['kubernetes', '_schemas/IoK8sApiBatchV1Job.js', 'io.k8s.api.batch.v1.Job'],
  'policy/v1/PodDisruptionBudget': ['kubernetes', '_schemas/IoK8sApiPolicyV1PodDisruptionBudget.js', 'io.k8s.api.policy.v1.PodDisruptionBudget'],
  'autoscaling/v2/HorizontalPodAutoscaler': [
    'kubernetes',
    '_schemas/IoK8sApiAutoscalingV2HorizontalPodAutoscaler.js',
    'io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler',
  ],
  'monitoring.coreos.com/v1/ServiceMonitor': ['prometheusOperator', 'monitoring.coreos.com/v1/ServiceMonitor.js', 'monitoring.coreos.com.v1.ServiceMonitor'],
};

const work = mkdtempSync(join(tmpdir(), 'palai-schemas-'));
try {
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work, ...Object.values(PACKAGES)], { cwd: work, encoding: 'utf8' }));
  const dirs = {};
  for (const [key, spec] of Object.entries(PACKAGES)) {
    const entry = packed.find((p) => `${p.name}@${p.version}` === spec);
    if (!entry) throw new Error(`npm pack did not return ${spec}`);
    const name = spec.slice(0, spec.lastIndexOf('@'));
    dirs[key] = join(work, 'node_modules', name);
    mkdirSync(dirs[key], { recursive: true });
    execFileSync('tar', ['xzf', join(work, entry.filename), '-C', dirs[key], '--strip-components=1']);
    dirs[`${key}Integrity`] = entry.integrity;
  }

  copyFileSync(join(dirs.compose, 'schemas/compose.schema.json'), join(HERE, 'compose-spec.json'));

  // The packages register each definition through @kubernetes-models/validate
  // when a model is loaded; stand-ins collect them instead of compiling them.
  const stub = (name, source) => {
    const dir = join(work, 'node_modules', name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, main: 'index.js' }));
    writeFileSync(join(dir, 'index.js'), source);
  };
  stub('@kubernetes-models/validate', 'exports.register = (id, schema) => globalThis.collected.set(id, schema); exports.validate = () => {};');
  stub(
    '@kubernetes-models/base',
    'exports.Model = class {}; exports.setSchema = (_model, _id, add) => add(); exports.createTypeMetaGuard = () => () => false;',
  );
  stub('tslib', 'exports.__importDefault = (m) => (m && m.__esModule ? m : { default: m });');
  globalThis.collected = new Map();
  const require = createRequire(join(work, 'loader.js'));
  for (const [pkg, file] of Object.values(KINDS)) {
    const module = require(join(dirs[pkg], file));
    module.addSchema?.();
  }

  const definitions = {};
  const visit = (id) => {
    if (id in definitions) return;
    const schema = globalThis.collected.get(id);
    if (!schema) throw new Error(`no definition ${id}`);
    definitions[id] = null;
    definitions[id] = strict(rewriteRefs(structuredClone(schema), visit));
  };
  for (const [, , id] of Object.values(KINDS)) visit(id);

  const sorted = Object.fromEntries(
    Object.keys(definitions)
      .sort()
      .map((id) => [id, definitions[id]]),
  );
  const document = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'kubernetes-strict.json',
    $comment: `Generated by tests/deploy/schemas/vendor.mjs; do not edit. From ${PACKAGES.kubernetes} (${dirs.kubernetesIntegrity}), ${PACKAGES.apimachinery} (${dirs.apimachineryIntegrity}), ${PACKAGES.prometheusOperator} (${dirs.prometheusOperatorIntegrity}).`,
    'x-kinds': Object.fromEntries(Object.entries(KINDS).map(([kind, [, , id]]) => [kind, id])),
    definitions: sorted,
  };
  writeFileSync(join(HERE, 'kubernetes-strict.json'), `${JSON.stringify(document, null, 1)}\n`);
  console.error(`wrote compose-spec.json and kubernetes-strict.json (${Object.keys(sorted).length} definitions)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** `"io.k8s…#"` (the packages' ids) → `"#/definitions/io.k8s…"`, visiting each definition named. */
function rewriteRefs(node, visit) {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, visit));
  if (!node || typeof node !== 'object') return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      const id = value.replace(/#$/, '');
      visit(id);
      out[key] = `#/definitions/${id}`;
    } else {
      out[key] = rewriteRefs(value, visit);
    }
  }
  return out;
}

/** What openapi2jsonschema --strict does: an object that lists its properties admits no others. */
function strict(node) {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  const out = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, key === 'properties' ? mapValues(value, strict) : strict(value)]));
  if (out.properties && out.additionalProperties === undefined && !out['x-kubernetes-preserve-unknown-fields']) out.additionalProperties = false;
  return out;
}

function mapValues(object, f) {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, f(value)]));
}
