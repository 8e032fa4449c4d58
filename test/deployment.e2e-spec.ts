import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';
import { loadAll, YAML11_SCHEMA } from 'js-yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import * as ts from 'typescript';
import { loadConfig } from '../src/config/app-config';

/**
 * The deployment artefacts, checked without a cluster or an engine: every Kubernetes manifest
 * against the API schema of its kind (kubernetes-models: JSON Schema from the Kubernetes OpenAPI
 * document, plus the TypeScript types of the same document, whose excess-property check refuses
 * fields Kubernetes does not know), and the settings that must agree across the Dockerfile,
 * the manifests, compose.yaml and deploy/nginx.conf. The image itself is built and run by
 * deploy/test-container.sh; compose.yaml is also checked there with `docker-compose config`.
 */

const root = resolve(__dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
/** The service keeps Node's default: an idle keep-alive connection is closed after this. */
const NODE_KEEP_ALIVE_TIMEOUT_MS = createServer().keepAliveTimeout;

/** A parsed YAML document: any shape until the schema check has passed. */
type Parsed = ReturnType<typeof JSON.parse>;

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: Parsed;
}

const kubernetesDir = 'deploy/kubernetes';
const manifests: Manifest[] = readdirSync(join(root, kubernetesDir))
  .filter((file) => /\.ya?ml$/.test(file))
  .sort()
  .flatMap((file) =>
    loadAll(read(join(kubernetesDir, file)), { schema: YAML11_SCHEMA })
      .filter((doc) => doc !== null && doc !== undefined)
      .map((doc) => ({ ...(doc as Manifest), file })),
  );

/** kubernetes-models lays its modules out as <apiVersion>/<Kind> (core: v1/<Kind>). */
const modelPath = (m: Pick<Manifest, 'apiVersion' | 'kind'>) => `kubernetes-models/${m.apiVersion}/${m.kind}`;

/** The model class of a manifest's kind, whose validate() checks it against the schema. */
function model(m: Manifest): new (data: unknown) => { validate(): void } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require(modelPath(m)) as Record<string, new (data: unknown) => { validate(): void }>)[m.kind];
}

function withoutFile(m: Manifest): Omit<Manifest, 'file'> {
  const { file: _file, ...doc } = m;
  return doc;
}

/** Type-checks each manifest as an object literal of its kind's interface; returns the errors. */
function typeErrors(docs: Manifest[]): string[] {
  const sources = new Map(
    docs.map((m, i) => [
      join(root, 'test', `__manifest_${i}__.ts`),
      `import type { I${m.kind} } from '${modelPath(m)}';\n` +
        `export const manifest: I${m.kind} = ${JSON.stringify(withoutFile(m), null, 2)};\n`,
    ]),
  );
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (path) => sources.has(path) || fileExists.call(host, path);
  host.readFile = (path) => sources.get(path) ?? readFile.call(host, path);
  host.getSourceFile = (path, language, ...rest) => {
    const text = sources.get(path);
    return text === undefined
      ? getSourceFile.call(host, path, language, ...rest)
      : ts.createSourceFile(path, text, language);
  };
  const program = ts.createProgram([...sources.keys()], options, host);
  const index = [...sources.keys()];
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const file = d.file ? docs[index.indexOf(d.file.fileName)]?.file : undefined;
    return `${file ?? '?'}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

const find = (kind: string, name?: string) => {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name));
  expect(found).toHaveLength(1);
  return found[0];
};

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('holds a Deployment, a Service, a Secret example and a PodDisruptionBudget', () => {
    expect(manifests.map((m) => `${m.file}: ${m.apiVersion} ${m.kind}`)).toEqual([
      'deployment.yaml: apps/v1 Deployment',
      'pod-disruption-budget.yaml: policy/v1 PodDisruptionBudget',
      'secret.example.yaml: v1 Secret',
      'service.yaml: v1 Service',
      'worker.yaml: apps/v1 Deployment',
    ]);
  });

  it.each(manifests.map((m) => [`${m.file} (${m.kind})`, m] as const))(
    '%s is valid against the schema of its kind',
    (_name, m) => {
      const Model = model(m);
      expect(() => new Model(withoutFile(m)).validate()).not.toThrow();
    },
  );

  it('uses no field that Kubernetes does not know (type check of every manifest)', () => {
    expect(typeErrors(manifests)).toEqual([]);
  });

  it('the schema check finds real mistakes (a wrong type, an unknown field)', () => {
    const deployment = find('Deployment', 'petstore-api');
    const wrongType = structuredClone(deployment);
    wrongType.spec.replicas = 'two';
    expect(() => new Deployment(withoutFile(wrongType) as never).validate()).toThrow(/replicas/);

    const unknownField = structuredClone(deployment);
    unknownField.spec.template.spec.containers[0].readinesProbe = { httpGet: { path: '/', port: 1 } };
    expect(typeErrors([unknownField]).join('\n')).toMatch(/readinesProbe/);
  });

  describe('the Deployment', () => {
    const deployment = () => find('Deployment', 'petstore-api');
    const pod = () => deployment().spec.template.spec;
    const container = () => {
      expect(pod().containers).toHaveLength(1);
      return pod().containers[0];
    };
    const env = (name: string) => container().env.find((e: { name: string }) => e.name === name);

    it('runs two or more replicas, replacing them one at a time without losing capacity', () => {
      expect(deployment().spec.replicas).toBeGreaterThanOrEqual(2);
      expect(deployment().spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
      expect(deployment().spec.selector.matchLabels).toEqual(deployment().spec.template.metadata.labels);
    });

    it('probes liveness and readiness on the health endpoints of the port the image exposes', () => {
      const exposed = Number(/^EXPOSE (\d+)$/m.exec(read('Dockerfile'))?.[1]);
      expect(container().ports).toEqual([{ name: 'http', containerPort: exposed }]);
      expect(container().livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
      expect(container().readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
      expect(container().startupProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
    });

    it('gives the shutdown more time than the preStop pause, the drain and SHUTDOWN_TIMEOUT_MS', () => {
      const [sleep, seconds] = container().lifecycle.preStop.exec.command as string[];
      expect(sleep).toBe('sleep');
      expect(Number(seconds)).toBeGreaterThan(0);
      const shutdownSeconds =
        (Number(env('SHUTDOWN_DRAIN_MS').value) + Number(env('SHUTDOWN_TIMEOUT_MS').value)) / 1000;
      expect(shutdownSeconds).toBeGreaterThan(0);
      expect(pod().terminationGracePeriodSeconds).toBeGreaterThan(Number(seconds) + shutdownSeconds);
    });

    it('runs as the image user (uid 1000), unprivileged, on a read-only root with /tmp writable', () => {
      expect(read('Dockerfile')).toMatch(/^USER node$/m);
      expect(pod().securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
      expect(container().securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
      const tmp = container().volumeMounts.find((v: { mountPath: string }) => v.mountPath === '/tmp');
      expect(pod().volumes).toContainEqual({ name: tmp.name, emptyDir: expect.any(Object) });
    });

    it('sets resource requests and a memory limit', () => {
      expect(container().resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
      expect(container().resources.limits.memory).toEqual(expect.any(String));
    });

    it('takes the database URL and keys from the Secret, whose example has every key it names', () => {
      const secret = find('Secret');
      const refs = container()
        .env.filter((e: Parsed) => e.valueFrom)
        .map((e: Parsed) => [e.name, e.valueFrom.secretKeyRef.name, e.valueFrom.secretKeyRef.key]);
      expect(refs).toEqual([
        ['DATABASE_URL', secret.metadata.name, 'database-url'],
        ['API_KEYS', secret.metadata.name, 'api-keys'],
        ['REDIS_URL', secret.metadata.name, 'redis-url'],
      ]);
      expect(Object.keys(secret.stringData).sort()).toEqual(['api-keys', 'database-url', 'redis-url']);
      expect(secret.stringData['database-url']).toMatch(/^postgres:\/\//);
    });

    it('answers requests and leaves the deliveries to the workers', () => {
      expect(env('PROCESS_ROLE').value).toBe('api');
    });

    it('is selected by the Service and the PodDisruptionBudget', () => {
      const labels = deployment().spec.template.metadata.labels;
      expect(find('Service').spec.selector).toEqual(labels);
      expect(find('Service').spec.ports).toEqual([{ name: 'http', port: 80, targetPort: 'http' }]);
      expect(find('PodDisruptionBudget').spec.selector.matchLabels).toEqual(labels);
    });
  });
});

describe('the worker Deployment', () => {
  const worker = () => find('Deployment', 'petstore-worker');
  const container = () => worker().spec.template.spec.containers[0];
  const env = (name: string) => container().env.find((e: { name: string }) => e.name === name)?.value;

  it('runs the same image as a worker, probed on HEALTH_PORT, its only port', () => {
    expect(container().image).toBe(find('Deployment', 'petstore-api').spec.template.spec.containers[0].image);
    expect(env('PROCESS_ROLE')).toBe('worker');
    expect(container().ports).toEqual([{ name: 'health', containerPort: Number(env('HEALTH_PORT')) }]);
    expect(container().livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'health' });
    expect(container().readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'health' });
  });

  it('is selected by no Service, and gives a stop more time than an attempt (15 s) and SHUTDOWN_TIMEOUT_MS', () => {
    expect(find('Service').spec.selector).toEqual(
      find('Deployment', 'petstore-api').spec.template.metadata.labels,
    );
    const shutdownMs = Number(env('SHUTDOWN_DRAIN_MS')) + Number(env('SHUTDOWN_TIMEOUT_MS'));
    expect(shutdownMs).toBeGreaterThan(15_000);
    expect(worker().spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(shutdownMs);
  });
});

describe('compose.yaml', () => {
  const compose = loadAll(read('compose.yaml'), { schema: YAML11_SCHEMA })[0] as {
    services: Record<string, Parsed>;
  };
  const services = compose.services;

  it('runs PostgreSQL, Redis, two API replicas of the image built here, and nginx', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'nginx', 'postgres', 'redis', 'worker']);
    expect(services.worker.environment).toMatchObject({ PROCESS_ROLE: 'worker', HEALTH_PORT: '3101' });
    const { SHUTDOWN_DRAIN_MS: drain, SHUTDOWN_TIMEOUT_MS: timeout } = services.worker.environment;
    expect(Number(drain) + Number(timeout)).toBeGreaterThan(15_000);
    expect(Number(/^(\d+)s$/.exec(String(services.worker.stop_grace_period))?.[1]) * 1000).toBeGreaterThan(
      Number(drain) + Number(timeout),
    );
    expect(services.worker.build).toBe('.');
    for (const name of ['api-1', 'api-2']) {
      expect(services[name].build).toBe('.');
      expect(services[name].environment.PROCESS_ROLE).toBe('api');
      expect(services[name].environment).toMatchObject({
        DATABASE_URL: expect.stringMatching(/^postgres:\/\//),
        REDIS_URL: expect.stringMatching(/^redis:\/\//),
        API_KEYS: expect.any(String),
      });
    }
  });

  it('starts the API after healthy PostgreSQL and Redis, and nginx after healthy API replicas', () => {
    expect(services.postgres.healthcheck.test).toEqual(expect.arrayContaining(['pg_isready']));
    expect(services.redis.healthcheck.test).toEqual(expect.arrayContaining(['redis-cli', 'ping']));
    for (const name of ['api-1', 'api-2'])
      expect(services[name].depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    expect(services.nginx.depends_on).toEqual({
      'api-1': { condition: 'service_healthy' },
      'api-2': { condition: 'service_healthy' },
    });
  });

  it('puts deploy/nginx.conf in front, and the replicas listen where it sends requests', () => {
    expect(services.nginx.volumes).toEqual(['./deploy/nginx.conf:/etc/nginx/nginx.conf:ro']);
    const upstreams = [...read('deploy/nginx.conf').matchAll(/^\s*server (127\.0\.0\.1):(\d+)/gm)].map(
      (m) => `${m[1]}:${m[2]}`,
    );
    const replicas = ['api-1', 'api-2'].map(
      (name) => `${services[name].environment.HOST}:${services[name].environment.PORT}`,
    );
    expect(replicas).toEqual(upstreams);
    // Loopback addresses are the same place for every service only on the host's network.
    for (const service of Object.values(services)) expect(service.network_mode).toBe('host');
  });

  it("nginx drops pooled connections before the service would, and Docker waits out the service's drain and shutdown", () => {
    const config = loadConfig({});
    const upstreamKeepAlive = Number(/^\s*keepalive_timeout (\d+)s;/m.exec(read('deploy/nginx.conf'))?.[1]);
    expect(upstreamKeepAlive * 1000).toBeLessThan(
      Math.min(NODE_KEEP_ALIVE_TIMEOUT_MS, config.shutdown.drainMs),
    );
    for (const name of ['api-1', 'api-2']) {
      const grace = Number(/^(\d+)s$/.exec(String(services[name].stop_grace_period))?.[1]);
      expect(grace * 1000).toBeGreaterThan(config.shutdown.drainMs + config.shutdown.timeoutMs);
    }
  });
});
