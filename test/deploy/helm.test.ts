// The Helm chart (deploy/helm/card-delivery) rendered by the real helm and every object it renders
// checked offline against the Kubernetes 1.33 API schemas (kubeconform -strict) and, for the KEDA
// ScaledObject, against KEDA's schema; then what the chart must say: probes, scaling, the
// migrations hook, configuration names, what the Ingress routes, the security context. The tools
// come from package registries into the tool cache (test/support/kube-tools.ts); no cluster is
// needed. Integration tier because it builds and runs external binaries.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../platform/config.js';
import { temporalConnectionOptions } from '../../temporal/connection-options.js';
import { SEARCH_ATTRIBUTES } from '../../temporal/search-attributes.js';
import { KUBERNETES_VERSION, resolveKubeTools, run, validateObjects, type KubeTools } from '../support/kube-tools.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHART = path.join(ROOT, 'deploy', 'helm', 'card-delivery');
const DATABASE_URL = 'postgres://cds:secret@postgres.db.svc.cluster.local:5432/card_delivery';
/** The chart's defaults plus the one value it cannot default. */
const DEFAULTS = ['--set', `secret.databaseUrl=${DATABASE_URL}`];
const EVERYTHING_ON = ['--set', 'secret.existingSecret=cds-secrets', '--set', 'ingress.enabled=true', '--set', 'keda.enabled=true', '--set', 'ingress.tlsSecretName=cds-tls']; // prettier-ignore

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Record<string, string> };
  spec?: any;
  data?: any;
  stringData?: any;
  automountServiceAccountToken?: boolean;
};

let tools: KubeTools;

beforeAll(async () => {
  const started = Date.now();
  tools = await resolveKubeTools((line) => console.log(`[kube-tools] ${line}`));
  const seconds = Math.round((Date.now() - started) / 1000);
  if (seconds > 5) console.log(`[kube-tools] ready in ${seconds} s`);
}, 30 * 60_000);

async function helmTemplate(args: string[]) {
  return run(tools.helm, ['template', 'cds', CHART, '--namespace', 'cards', '--kube-version', KUBERNETES_VERSION, ...args]);
}

async function render(args: string[]): Promise<K8sObject[]> {
  const result = await helmTemplate(args);
  if (result.code !== 0) throw new Error(`helm template failed:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc) => doc.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
}

/** A Kubernetes memory quantity (`1Gi`, `512Mi`) in MiB. */
function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
}

const kinds = (objects: K8sObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
const podSpecs = (objects: K8sObject[]) => objects.filter((o) => o.kind === 'Deployment' || o.kind === 'Job').map((o) => ({ owner: `${o.kind}/${o.metadata.name}`, pod: o.spec.template.spec })); // prettier-ignore

describe('deploy/helm/card-delivery: every rendered object against the API schemas', () => {
  it(`renders the defaults into api, worker, migrations and their configuration, every object valid for Kubernetes ${KUBERNETES_VERSION}`, async () => {
    const objects = await render(DEFAULTS);
    expect(kinds(objects)).toEqual([
      'ConfigMap/cds-card-delivery-config',
      'Deployment/cds-card-delivery-api',
      'Deployment/cds-card-delivery-worker',
      'HorizontalPodAutoscaler/cds-card-delivery-api',
      'Job/cds-card-delivery-migrations',
      'PodDisruptionBudget/cds-card-delivery-api',
      'PodDisruptionBudget/cds-card-delivery-worker',
      'Secret/cds-card-delivery',
      'Secret/cds-card-delivery-migrations',
      'Service/cds-card-delivery-api',
      'ServiceAccount/cds-card-delivery',
    ]);
    const verdicts = await validateObjects(tools, objects);
    expect(verdicts.filter((v) => !v.valid)).toEqual([]);
    expect(verdicts.every((v) => v.checkedBy === 'kubernetes')).toBe(true);
  });

  it('with ingress, KEDA and an existing Secret on, every object is valid, the ScaledObject against KEDA’s schema', async () => {
    const objects = await render(EVERYTHING_ON);
    expect(kinds(objects)).toEqual(
      expect.arrayContaining(['Ingress/cds-card-delivery', 'ScaledObject/cds-card-delivery-worker', 'Job/cds-card-delivery-migrations']),
    );
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]); // the operator's Secret is used instead
    const verdicts = await validateObjects(tools, objects);
    expect(verdicts.filter((v) => !v.valid)).toEqual([]);
    expect(verdicts.find((v) => v.kind === 'ScaledObject')?.checkedBy).toBe('keda');
  });

  it('refuses an object with a field the API does not know, or of the wrong type', async () => {
    const unknownField = await render([...DEFAULTS, '--set-json', 'podSecurityContext={"runAsNonRoot":true,"runAsUsr":1000}']);
    const unknownVerdicts = await validateObjects(tools, unknownField);
    expect(unknownVerdicts.filter((v) => !v.valid).map((v) => `${v.kind}/${v.name}`)).toEqual([
      'Deployment/cds-card-delivery-api',
      'Deployment/cds-card-delivery-worker',
      'Job/cds-card-delivery-migrations',
    ]);
    expect(unknownVerdicts.find((v) => !v.valid)?.message).toContain("additional properties 'runAsUsr' not allowed");

    const wrongType = await validateObjects(tools, await render([...DEFAULTS, '--set', 'api.port=http']));
    expect(wrongType.filter((v) => !v.valid).map((v) => `${v.kind}/${v.name}`)).toEqual(['Deployment/cds-card-delivery-api']);
    expect(wrongType.find((v) => !v.valid)?.message).toContain('containerPort');
  });

  it('refuses a ScaledObject that KEDA’s schema refuses', async () => {
    const objects = await render([...EVERYTHING_ON, '--set', 'keda.minReplicaCount=two']);
    const verdicts = await validateObjects(tools, objects);
    expect(verdicts.filter((v) => !v.valid)).toEqual([
      expect.objectContaining({
        kind: 'ScaledObject',
        checkedBy: 'keda',
        message: expect.stringContaining('minReplicaCount must be integer'),
      }),
    ]);
  });

  const ciValues = readdirSync(path.join(CHART, 'ci')).filter((file) => file.endsWith('-values.yaml'));

  it('has value files for chart-testing under ci/, and a README that shows the one value a user must give', () => {
    expect(ciValues.sort()).toEqual(['default-values.yaml', 'everything-on-values.yaml']);
    const readme = readFileSync(path.join(CHART, 'README.md'), 'utf8');
    expect(readme).toMatch(/--set secret\.databaseUrl=/);
    expect(readme).toContain('secret.existingSecret');
  });

  it.each(ciValues)('lints (helm lint --strict) and renders with ci/%s alone, every object valid', async (file) => {
    const values = ['-f', path.join(CHART, 'ci', file)];
    const lint = await run(tools.helm, ['lint', '--strict', CHART, ...values]);
    expect({ code: lint.code, output: lint.stdout + lint.stderr }).toEqual({
      code: 0,
      output: expect.stringContaining('0 chart(s) failed'),
    });
    const objects = await render(values);
    expect(kinds(objects)).toEqual(expect.arrayContaining(['Deployment/cds-card-delivery-api', 'Deployment/cds-card-delivery-worker']));
    const verdicts = await validateObjects(tools, objects);
    expect(verdicts.filter((v) => !v.valid)).toEqual([]);
  });

  it('refuses to render without the database (no value file, no --set)', async () => {
    const result = await helmTemplate([]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('secret.databaseUrl');
  });

  it('passes helm lint --strict', async () => {
    const lint = await run(tools.helm, ['lint', '--strict', CHART, ...DEFAULTS]);
    expect(lint.stdout + lint.stderr).toContain('0 chart(s) failed');
    expect(lint.code).toBe(0);
  });

  it('will not render without a database: neither secret.databaseUrl nor secret.existingSecret', async () => {
    const result = await helmTemplate([]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('set secret.databaseUrl');
  });
});

describe('deploy/helm/card-delivery: what the objects say', () => {
  it('probes the API on its port: /healthz for liveness, /readyz for readiness', async () => {
    const api = find(await render(DEFAULTS), 'Deployment', 'cds-card-delivery-api').spec.template.spec.containers[0];
    expect(api.ports).toEqual([{ name: 'http', containerPort: 3000, protocol: 'TCP' }]);
    expect(api.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(api.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(api.resources.requests).toEqual({ cpu: '250m', memory: '256Mi' });
  });

  it('probes the worker on WORKER_METRICS_PORT (9464): /healthz for liveness, /readyz for readiness', async () => {
    const objects = await render(DEFAULTS);
    const worker = find(objects, 'Deployment', 'cds-card-delivery-worker').spec.template.spec.containers[0];
    expect(worker.ports).toEqual([{ name: 'metrics', containerPort: 9464, protocol: 'TCP' }]);
    expect(worker.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(worker.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(find(objects, 'ConfigMap', 'cds-card-delivery-config').data.WORKER_METRICS_PORT).toBe('9464');
  });

  it('caps the worker’s V8 heaps (worker.nodeOptions as NODE_OPTIONS) inside its memory limit, and not the API’s', async () => {
    const objects = await render(DEFAULTS);
    const worker = find(objects, 'Deployment', 'cds-card-delivery-worker').spec.template.spec.containers[0];
    const api = find(objects, 'Deployment', 'cds-card-delivery-api').spec.template.spec.containers[0];
    const nodeOptions = (container: { env: Array<{ name: string; value: string }> }) =>
      container.env.find((variable) => variable.name === 'NODE_OPTIONS')?.value;
    const heapMiB = Number(/^--max-old-space-size=(\d+)$/.exec(nodeOptions(worker) ?? '')?.[1]);
    // Two isolates (main and workflow thread) under the cap leave room for native memory in the limit.
    expect(2 * heapMiB).toBeLessThan(mebibytes(worker.resources.limits.memory) * 0.75);
    expect(nodeOptions(api)).toBeUndefined();
    const uncapped = find(await render([...DEFAULTS, '--set', 'worker.nodeOptions=']), 'Deployment', 'cds-card-delivery-worker');
    expect(nodeOptions(uncapped.spec.template.spec.containers[0])).toBeUndefined();
  });

  it('scales the API on CPU with an autoscaling/v2 HorizontalPodAutoscaler, which then owns its replica count', async () => {
    const objects = await render(DEFAULTS);
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'cds-card-delivery-api');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'cds-card-delivery-api' });
    expect(hpa.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ]);
    expect(find(objects, 'Deployment', 'cds-card-delivery-api').spec.replicas).toBeUndefined();
  });

  it('scales the worker with KEDA’s Temporal scaler on its own task queue when keda.enabled, which then owns its replica count', async () => {
    const off = await render(DEFAULTS);
    expect(find(off, 'Deployment', 'cds-card-delivery-worker').spec.replicas).toBe(2);
    expect(off.some((o) => o.kind === 'ScaledObject')).toBe(false);

    const on = await render([...EVERYTHING_ON, '--set', 'config.TEMPORAL_NAMESPACE=card-delivery']);
    const scaled = find(on, 'ScaledObject', 'cds-card-delivery-worker');
    expect(scaled.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'cds-card-delivery-worker' });
    expect(scaled.spec.triggers).toEqual([
      {
        type: 'temporal',
        metadata: expect.objectContaining({
          endpoint: 'temporal-frontend.temporal.svc.cluster.local:7233',
          namespace: 'card-delivery',
          taskQueue: 'card-delivery',
          targetQueueSize: '20',
        }),
      },
    ]);
    expect(find(on, 'Deployment', 'cds-card-delivery-worker').spec.replicas).toBeUndefined();
  });

  it('runs the compiled migrations (node, not npm) as a pre-install/pre-upgrade hook, its DATABASE_URL from a hook Secret made before it', async () => {
    const objects = await render(DEFAULTS);
    const job = find(objects, 'Job', 'cds-card-delivery-migrations');
    expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    const container = job.spec.template.spec.containers[0];
    expect(container.command).toEqual(['node', 'dist/db/migrate-cli.js']);
    const databaseUrl = container.env.find((e: any) => e.name === 'DATABASE_URL');
    expect(databaseUrl.valueFrom.secretKeyRef).toEqual({ name: 'cds-card-delivery-migrations', key: 'DATABASE_URL' });
    const hookSecret = find(objects, 'Secret', 'cds-card-delivery-migrations');
    expect(hookSecret.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(Number(hookSecret.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(
      Number(job.metadata.annotations?.['helm.sh/hook-weight']),
    );
    expect(hookSecret.stringData).toEqual({ DATABASE_URL });

    const existing = find(await render(EVERYTHING_ON), 'Job', 'cds-card-delivery-migrations').spec.template.spec.containers[0];
    expect(existing.env.find((e: any) => e.name === 'DATABASE_URL').valueFrom.secretKeyRef).toEqual({
      name: 'cds-secrets',
      key: 'DATABASE_URL',
    });
  });

  it('gives api and worker a configuration the service accepts, under the names platform/config.ts reads, and the Secret’s DATABASE_URL', async () => {
    const objects = await render(DEFAULTS);
    const configMap = find(objects, 'ConfigMap', 'cds-card-delivery-config');
    const secret = find(objects, 'Secret', 'cds-card-delivery');
    for (const name of ['api', 'worker']) {
      const container = find(objects, 'Deployment', `cds-card-delivery-${name}`).spec.template.spec.containers[0];
      expect(container.envFrom).toEqual([
        { configMapRef: { name: 'cds-card-delivery-config' } },
        { secretRef: { name: 'cds-card-delivery' } },
      ]);
    }
    const config = loadConfig({ ...configMap.data, ...secret.stringData });
    expect(config).toMatchObject({
      DATABASE_URL,
      TEMPORAL_ADDRESS: 'temporal-frontend.temporal.svc.cluster.local:7233',
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TASK_QUEUE: 'card-delivery',
      PORT: 3000,
      RATE_LIMIT_PER_MINUTE: 1000,
      TRUST_PROXY: false,
      WEBHOOK_RETRY_SCHEDULE: [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000],
    });
    // Every name the chart sets is one the service reads (WORKER_METRICS_PORT: the worker's server).
    const known = readFileSync(path.join(ROOT, 'platform', 'config.ts'), 'utf8');
    const unknown = Object.keys(configMap.data).filter((name) => name !== 'WORKER_METRICS_PORT' && !known.includes(`${name}:`));
    expect(unknown).toEqual([]);
  });

  it('routes only /v1, /docs, /dashboard and /t through the Ingress, and then trusts the proxy’s X-Forwarded-For', async () => {
    const objects = await render(EVERYTHING_ON);
    const rules = find(objects, 'Ingress', 'cds-card-delivery').spec.rules;
    expect(rules).toHaveLength(1);
    expect(rules[0].http.paths.map((p: any) => [p.path, p.pathType, p.backend.service.name])).toEqual([
      ['/v1', 'Prefix', 'cds-card-delivery-api'],
      ['/docs', 'Prefix', 'cds-card-delivery-api'],
      ['/dashboard', 'Prefix', 'cds-card-delivery-api'],
      ['/t', 'Prefix', 'cds-card-delivery-api'],
    ]);
    expect(loadConfig(find(objects, 'ConfigMap', 'cds-card-delivery-config').data).TRUST_PROXY).toBe(true);
    // Without an Ingress the chart trusts no header unless told to.
    expect(find(await render(DEFAULTS), 'ConfigMap', 'cds-card-delivery-config').data.TRUST_PROXY).toBe('false');
  });

  it('sets PUBLIC_BASE_URL to the Ingress host (https with its TLS Secret) unless extraConfig names one', async () => {
    const configOf = async (args: string[]) => find(await render(args), 'ConfigMap', 'cds-card-delivery-config').data;
    expect(loadConfig((await configOf(EVERYTHING_ON)) as NodeJS.ProcessEnv).PUBLIC_BASE_URL).toBe('https://cards.example.com');
    expect((await configOf(['--set', 'secret.existingSecret=cds-secrets', '--set', 'ingress.enabled=true'])).PUBLIC_BASE_URL).toBe('http://cards.example.com'); // prettier-ignore
    expect((await configOf([...EVERYTHING_ON, '--set', 'extraConfig.PUBLIC_BASE_URL=https://track.example.org'])).PUBLIC_BASE_URL).toBe('https://track.example.org'); // prettier-ignore
    expect((await configOf(DEFAULTS)).PUBLIC_BASE_URL).toBeUndefined();
  });

  it('runs every pod as non-root, read-only root filesystem, no privilege escalation, no service account token', async () => {
    const objects = await render(EVERYTHING_ON);
    expect(find(objects, 'ServiceAccount', 'cds-card-delivery').automountServiceAccountToken).toBe(false);
    const pods = podSpecs(objects);
    expect(pods.map((p) => p.owner).sort()).toEqual(['Deployment/cds-card-delivery-api', 'Deployment/cds-card-delivery-worker', 'Job/cds-card-delivery-migrations']); // prettier-ignore
    for (const { pod } of pods) {
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, seccompProfile: { type: 'RuntimeDefault' } });
      for (const container of pod.containers) {
        expect(container.securityContext).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]); // the one writable place
      }
    }
  });

  describe('Temporal over TLS and the Postgres CA, from Secrets (off by default)', () => {
    const TEMPORAL_TLS_ON = [
      '--set', 'temporalTls.enabled=true',
      '--set', 'temporalTls.clientCertificate.secretName=temporal-client',
      '--set', 'temporalTls.serverCa.secretName=temporal-ca',
      '--set', 'temporalTls.serverName=frontend.temporal.internal',
      '--set', 'temporalTls.apiKey.secretName=temporal-cloud',
    ]; // prettier-ignore
    const PG_CA_URL = `${DATABASE_URL}?sslmode=verify-full&sslrootcert=/etc/card-delivery/postgres-tls/ca.crt`;
    const PG_CA_ON = ['--set', 'postgresTls.caSecretName=postgres-ca', '--set', `secret.databaseUrl=${PG_CA_URL}`];
    const container = (objects: K8sObject[], kind: string, name: string) => find(objects, kind, name).spec.template.spec.containers[0];
    const volume = (objects: K8sObject[], kind: string, owner: string, name: string) =>
      find(objects, kind, owner).spec.template.spec.volumes.find((v: { name: string }) => v.name === name);

    /**
     * What the kubelet does with a Secret volume: every item of every source becomes a file under the
     * mount path, here with the content `<secret>/<key>` so that a test can see which key a path holds.
     */
    function project(vol: any, dir: string): void {
      const sources = vol.projected
        ? vol.projected.sources.map((s: any) => s.secret)
        : [{ name: vol.secret.secretName, items: vol.secret.items }];
      for (const source of sources)
        for (const item of source.items) {
          mkdirSync(path.dirname(path.join(dir, item.path)), { recursive: true });
          writeFileSync(path.join(dir, item.path), `${source.name}/${item.key}`);
        }
    }

    it('renders nothing of it with the defaults', async () => {
      const objects = await render(DEFAULTS);
      const data = find(objects, 'ConfigMap', 'cds-card-delivery-config').data;
      expect(Object.keys(data).filter((name) => name.startsWith('TEMPORAL_TLS') || name === 'TEMPORAL_API_KEY')).toEqual([]);
      for (const { pod } of podSpecs(objects)) {
        expect(pod.volumes.map((v: { name: string }) => v.name)).toEqual(['tmp']);
        expect(pod.containers[0].env.map((e: { name: string }) => e.name)).not.toContain('TEMPORAL_API_KEY');
      }
    });

    it('mounts the client certificate, key and CA into api and worker, and the paths it sets read those Secrets’ keys', async () => {
      const mount = mkdtempSync(path.join(tmpdir(), 'cds-helm-tls-'));
      try {
        const objects = await render([...DEFAULTS, ...TEMPORAL_TLS_ON, '--set', `temporalTls.mountPath=${mount}`]);
        const verdicts = await validateObjects(tools, objects);
        expect(verdicts.filter((v) => !v.valid)).toEqual([]);
        for (const name of ['api', 'worker']) {
          const c = container(objects, 'Deployment', `cds-card-delivery-${name}`);
          expect(c.volumeMounts).toContainEqual({ name: 'temporal-tls', mountPath: mount, readOnly: true });
          expect(c.env).toContainEqual({
            name: 'TEMPORAL_API_KEY',
            valueFrom: { secretKeyRef: { name: 'temporal-cloud', key: 'TEMPORAL_API_KEY' } },
          });
        }
        // The migrations talk to Postgres only.
        expect(container(objects, 'Job', 'cds-card-delivery-migrations').volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);

        project(volume(objects, 'Deployment', 'cds-card-delivery-worker', 'temporal-tls'), mount);
        const configMap = find(objects, 'ConfigMap', 'cds-card-delivery-config').data;
        const config = loadConfig({ ...configMap, DATABASE_URL, TEMPORAL_API_KEY: 'a-cloud-key' });
        const options = temporalConnectionOptions(config.TEMPORAL_ADDRESS!, config);
        expect({
          crt: options.tls?.clientCertPair?.crt.toString(),
          key: options.tls?.clientCertPair?.key.toString(),
          ca: options.tls?.serverRootCACertificate?.toString(),
          serverName: options.tls?.serverNameOverride,
          apiKey: options.apiKey,
        }).toEqual({
          crt: 'temporal-client/tls.crt',
          key: 'temporal-client/tls.key',
          ca: 'temporal-ca/ca.crt',
          serverName: 'frontend.temporal.internal',
          apiKey: 'a-cloud-key',
        });
      } finally {
        rmSync(mount, { recursive: true, force: true });
      }
    });

    it('turns TLS on with the system roots alone (Temporal Cloud with an API key): no volume, TEMPORAL_TLS true', async () => {
      const objects = await render([
        ...DEFAULTS,
        '--set',
        'temporalTls.enabled=true',
        '--set',
        'temporalTls.apiKey.secretName=temporal-cloud',
      ]);
      const configMap = find(objects, 'ConfigMap', 'cds-card-delivery-config').data;
      expect(loadConfig({ ...configMap, DATABASE_URL, TEMPORAL_API_KEY: 'k' })).toMatchObject({
        TEMPORAL_TLS: true,
        TEMPORAL_API_KEY: 'k',
      });
      expect(configMap.TEMPORAL_TLS_CLIENT_CERT_PATH).toBeUndefined();
      expect(volume(objects, 'Deployment', 'cds-card-delivery-api', 'temporal-tls')).toBeUndefined();
      expect((await validateObjects(tools, objects)).filter((v) => !v.valid)).toEqual([]);
    });

    it('mounts the Postgres CA into api, worker and the migrations Job, at the path DATABASE_URL names', async () => {
      const objects = await render([...DEFAULTS, ...PG_CA_ON]);
      expect((await validateObjects(tools, objects)).filter((v) => !v.valid)).toEqual([]);
      for (const [kind, name] of [
        ['Deployment', 'cds-card-delivery-api'],
        ['Deployment', 'cds-card-delivery-worker'],
        ['Job', 'cds-card-delivery-migrations'],
      ]) {
        expect(container(objects, kind, name).volumeMounts).toContainEqual({
          name: 'postgres-tls',
          mountPath: '/etc/card-delivery/postgres-tls',
          readOnly: true,
        });
        expect(volume(objects, kind, name, 'postgres-tls').secret).toMatchObject({
          secretName: 'postgres-ca',
          items: [{ key: 'ca.crt', path: 'ca.crt' }],
        });
      }
      const mount = mkdtempSync(path.join(tmpdir(), 'cds-helm-pg-'));
      try {
        project(volume(objects, 'Job', 'cds-card-delivery-migrations', 'postgres-tls'), mount);
        const sslrootcert = new URL(PG_CA_URL).searchParams.get('sslrootcert')!;
        expect(readFileSync(path.join(mount, path.relative('/etc/card-delivery/postgres-tls', sslrootcert)), 'utf8')).toBe(
          'postgres-ca/ca.crt',
        );
      } finally {
        rmSync(mount, { recursive: true, force: true });
      }
    });

    it('refuses a certificate Secret without temporalTls.enabled, and a chart-made DATABASE_URL that does not name the mounted CA', async () => {
      const off = await helmTemplate([...DEFAULTS, '--set', 'temporalTls.clientCertificate.secretName=temporal-client']);
      expect(off.code).not.toBe(0);
      expect(off.stderr).toContain('temporalTls.enabled');
      const unnamed = await helmTemplate([...DEFAULTS, '--set', 'postgresTls.caSecretName=postgres-ca']);
      expect(unnamed.code).not.toBe(0);
      expect(unnamed.stderr).toContain('sslrootcert=/etc/card-delivery/postgres-tls/ca.crt');
      // With a Secret of the operator's, the chart cannot read the URL: it renders.
      expect(
        (await helmTemplate(['--set', 'secret.existingSecret=cds-secrets', '--set', 'postgresTls.caSecretName=postgres-ca'])).code,
      ).toBe(0);
    });
  });

  it('names in deploy/README.md the search attributes the workflows upsert, for the Temporal namespace', () => {
    const readme = readFileSync(path.join(ROOT, 'deploy', 'README.md'), 'utf8');
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTES)) expect(readme).toContain(`--name ${name} --type ${type}`);
  });
});
