// deploy/k8s validated offline: each object against the Kubernetes API schema that ships in the npm package
// kubernetes-models (no schema is downloaded), then the links between them that no schema sees (selectors,
// probe ports, autoscaler targets, the variables the service reads).
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import dockerignoreModule from "@balena/dockerignore";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml } from "yaml";
import { DEFAULT_HEARTBEAT_FILE } from "../../channels/core/worker-settings.js";
import { WORKER_HEARTBEAT_STALE_MS } from "../../channels/limits.js";
import { buildDist, DIST_DIR, filesUnder, PRELOAD } from "../../scripts/build.js";
import { ROOT_DIR } from "../../src/config.js";
import { THREADPOOL_SIZE } from "../../src/limits.js";

const run = promisify(execFile);

// The package is CommonJS (module.exports is the factory) but its types declare an ES default export.
const dockerignore = dockerignoreModule as unknown as typeof dockerignoreModule.default;
const K8S = path.join(ROOT_DIR, "deploy/k8s");
const SECRET_EXAMPLE = "secret.example.yaml";

// biome-ignore lint/suspicious/noExplicitAny: manifests are read as plain YAML data
type Manifest = Record<string, any>;

/** What `kubectl apply -k` applies, and the Secret the operator creates from the example. */
async function manifests(): Promise<{ file: string; object: Manifest }[]> {
  const kustomization = parseYaml(await readFile(path.join(K8S, "kustomization.yaml"), "utf8")) as {
    resources: string[];
  };
  const all: { file: string; object: Manifest }[] = [];
  for (const file of [...kustomization.resources, SECRET_EXAMPLE]) {
    for (const doc of parseAllDocuments(await readFile(path.join(K8S, file), "utf8"))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
      all.push({ file, object: doc.toJSON() as Manifest });
    }
  }
  return all;
}

/** package.json's scripts: what `npm start` and `npm run worker` run, which the deployments must run too. */
async function npmScripts(): Promise<Record<string, string>> {
  const { scripts } = JSON.parse(await readFile(path.join(ROOT_DIR, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  return scripts;
}

/** The kubernetes-models class for an object's apiVersion and kind ("v1" is the core group). */
async function modelOf(object: Manifest): Promise<new (data: Manifest) => { validate(): void }> {
  const group = await import(`kubernetes-models/${object.apiVersion}`);
  const model = group[object.kind];
  if (!model) throw new Error(`kubernetes-models has no ${object.apiVersion} ${object.kind}`);
  return model;
}

const byKind = (all: { object: Manifest }[], kind: string) =>
  all.map((m) => m.object).filter((o) => o.kind === kind);

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

describe("deploy/k8s", () => {
  it("lists every manifest in kustomization.yaml but the Secret's example", async () => {
    const files = (await readdir(K8S)).filter(
      (f) => f.endsWith(".yaml") && f !== "kustomization.yaml" && f !== SECRET_EXAMPLE,
    );
    const { resources } = parseYaml(await readFile(path.join(K8S, "kustomization.yaml"), "utf8")) as {
      resources: string[];
    };
    expect([...resources].sort()).toEqual(files.sort());
  });

  it("holds only objects valid against the Kubernetes API schemas", async () => {
    const all = await manifests();
    const kinds = all.map((m) => m.object.kind).sort();
    expect(kinds).toEqual([
      "ConfigMap",
      "Deployment",
      "Deployment",
      "HorizontalPodAutoscaler",
      "HorizontalPodAutoscaler",
      "PodDisruptionBudget",
      "PodDisruptionBudget",
      "Secret",
      "Service",
      "Service",
    ]);
    for (const { file, object } of all) {
      const Model = await modelOf(object);
      expect(
        () => new Model(object).validate(),
        `${file}: ${object.kind} ${object.metadata?.name}`,
      ).not.toThrow();
    }
  });

  it("catches a broken manifest (the check can fail)", async () => {
    const [deployment] = byKind(await manifests(), "Deployment");
    const broken = structuredClone(deployment!);
    broken.spec.replicas = "two";
    delete broken.spec.selector;
    const Model = await modelOf(broken);
    expect(() => new Model(broken).validate()).toThrow(/replicas|selector/);
  });

  it("wires the objects together: selectors, probes on /health, autoscalers and budgets on real pods", async () => {
    const all = await manifests();
    const deployments = byKind(all, "Deployment");
    for (const d of deployments)
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    const api = deployments.find((d) => d.metadata.name === "crop-diagnosis-api")!;
    const worker = deployments.find((d) => d.metadata.name === "crop-diagnosis-worker")!;
    const apiContainer = api.spec.template.spec.containers[0];
    const port = apiContainer.ports.find((p: Manifest) => p.name === "http");
    expect(apiContainer.env).toContainEqual({ name: "PORT", value: String(port.containerPort) });
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"])
      expect(apiContainer[probe].httpGet).toEqual({ path: "/health", port: "http" });

    // The worker's liveness: its heartbeat file, no older than the worker promises (channels/limits.ts).
    const alive = worker.spec.template.spec.containers[0].livenessProbe.exec.command.join(" ");
    expect(alive).toContain(DEFAULT_HEARTBEAT_FILE);
    expect(alive).toContain(`< ${WORKER_HEARTBEAT_STALE_MS}`);

    const services = byKind(all, "Service");
    const apiService = services.find((s) => s.metadata.name === "crop-diagnosis-api")!;
    expect(matches(apiService.spec.selector, api.spec.template.metadata.labels)).toBe(true);
    expect(services.find((s) => s.metadata.name === "redis")?.spec.type).toBe("ExternalName");

    for (const hpa of byKind(all, "HorizontalPodAutoscaler")) {
      expect(deployments.map((d) => d.metadata.name)).toContain(hpa.spec.scaleTargetRef.name);
      expect(hpa.spec.metrics[0].resource.name).toBe("cpu");
      // The autoscaler owns the count: a replicas field would reset it at every `kubectl apply -k`.
      const scaled = deployments.find((d) => d.metadata.name === hpa.spec.scaleTargetRef.name)!;
      expect(scaled.spec.replicas, scaled.metadata.name).toBeUndefined();
    }
    // Sized for the CPU a pod asks for, not the node's cores (which Node counts whatever the pod's quota).
    const settings = byKind(all, "ConfigMap").find((c) => c.metadata.name === "crop-diagnosis-settings")!;
    const cpus = Number(apiContainer.resources.requests.cpu);
    expect(Number(settings.data.UPLOADS_IN_FLIGHT)).toBeLessThanOrEqual(4 * cpus);
    expect(Number(settings.data.UV_THREADPOOL_SIZE)).toBeLessThanOrEqual(4 * cpus);
    const budgets = byKind(all, "PodDisruptionBudget");
    for (const d of [api, worker])
      expect(budgets.some((b) => matches(b.spec.selector.matchLabels, d.spec.template.metadata.labels))).toBe(
        true,
      );
  });

  it("runs what npm start and npm run worker run, with settings from the ConfigMap and credentials from the Secret", async () => {
    const all = await manifests();
    const scripts = await npmScripts();
    const commandOf = (name: string) =>
      byKind(all, "Deployment").find((d) => d.metadata.name === name)!.spec.template.spec.containers[0];
    expect(`exec ${commandOf("crop-diagnosis-api").command.join(" ")}`).toBe(scripts.start);
    expect(`exec ${commandOf("crop-diagnosis-worker").command.join(" ")}`).toBe(scripts.worker);

    const secretKeys = Object.keys(byKind(all, "Secret")[0]!.stringData);
    for (const key of secretKeys)
      expect(key).toMatch(/^(REDIS_URL|API_KEYS|CONSOLE_SESSION_SECRET|TWILIO_|TELEGRAM_|AT_)/);
    // Every variable set is one the service documents (a typo would be silently ignored).
    const documented =
      (await readFile(path.join(ROOT_DIR, "docs/api.md"), "utf8")) +
      (await readFile(path.join(ROOT_DIR, "docs/channels.md"), "utf8")) +
      (await readFile(path.join(ROOT_DIR, "docs/console.md"), "utf8"));
    const configKeys = Object.keys(byKind(all, "ConfigMap")[0]!.data);
    const containerEnv = byKind(all, "Deployment").flatMap((d) =>
      d.spec.template.spec.containers.flatMap((c: Manifest) => (c.env ?? []).map((e: Manifest) => e.name)),
    );
    for (const name of [...secretKeys, ...configKeys, ...containerEnv])
      expect(documented).toContain(`\`${name}\``);
  });
});

describe("deploy/compose.yaml", () => {
  it("says which Compose it needs", async () => {
    const compose = await readFile(path.join(ROOT_DIR, "deploy/compose.yaml"), "utf8");
    expect(compose).toMatch(/Compose v2/);
  });
});

describe("the API's command", () => {
  it("is npm start's in the Dockerfile and in compose.yaml, node's flags included", async () => {
    const scripts = await npmScripts();
    const dockerfile = await readFile(path.join(ROOT_DIR, "deploy/Dockerfile"), "utf8");
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? "[]") as string[];
    expect(`exec ${cmd.join(" ")}`).toBe(scripts.start);
    const compose = parseYaml(await readFile(path.join(ROOT_DIR, "deploy/compose.yaml"), "utf8")) as Manifest;
    expect(`exec ${compose.services.api.command.join(" ")}`).toBe(scripts.start);
    expect(`exec ${compose.services.worker.command.join(" ")}`).toBe(scripts.worker);
  });

  it("sizes libuv's pool in a CommonJS preload, which runs before the ES module loader starts the pool", async () => {
    const scripts = await npmScripts();
    for (const command of [scripts.start!, scripts.worker!])
      expect(command).toMatch(new RegExp(`^exec node --require \\./dist/${PRELOAD.replace(".", "\\.")} `));
    await buildDist();
    const dir = await mkdtemp(path.join(tmpdir(), "preload-"));
    try {
      // An ES module entry, as the service's are: what the pool was given when the loader started it.
      const entry = path.join(dir, "entry.mjs");
      await writeFile(entry, "console.log(process.env.UV_THREADPOOL_SIZE);\n");
      const env = { ...process.env };
      delete env.UV_THREADPOOL_SIZE;
      const { stdout } = await run(process.execPath, ["--require", path.join(DIST_DIR, PRELOAD), entry], {
        env,
      });
      expect(stdout.trim()).toBe(String(THREADPOOL_SIZE));
      // An operator's own value wins.
      const own = await run(process.execPath, ["--require", path.join(DIST_DIR, PRELOAD), entry], {
        env: { ...env, UV_THREADPOOL_SIZE: "7" },
      });
      expect(own.stdout.trim()).toBe("7");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("the image's build context (.dockerignore)", () => {
  it("keeps every file the Dockerfile copies from the context and leaves the training out", async () => {
    const rules = dockerignore().add(
      (await readFile(path.join(ROOT_DIR, ".dockerignore"), "utf8")).split("\n"),
    );
    const dockerfile = await readFile(path.join(ROOT_DIR, "deploy/Dockerfile"), "utf8");
    const sources = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(" "));
    expect(sources).toContain("models");
    const files: string[] = [];
    for (const source of new Set(sources)) {
      if (!(await stat(path.join(ROOT_DIR, source))).isDirectory()) {
        files.push(source);
        continue;
      }
      files.push(...(await filesUnder(source)));
    }
    const training = (file: string) => file.startsWith("models/training/");
    expect(files.filter((file) => !training(file) && rules.ignores(file))).toEqual([]);
    expect(files.filter((file) => training(file) && !rules.ignores(file))).toEqual([]);
    expect(files).toContain("models/disease-classifier.onnx");
    expect(files.some(training)).toBe(true);
  });
});
