// Validates Kubernetes objects against the API schemas shipped in the
// kubernetes-models package, offline. Reads a JSON array of objects on stdin,
// writes a JSON array of { id, error } for the invalid ones. A separate
// process because kubernetes-models is ESM-only ("import" exports), which
// Jest's CommonJS runtime cannot load.
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const objects = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const problems = [];
for (const obj of objects) {
  const id = `${obj.apiVersion}/${obj.kind}/${obj.metadata?.name}`;
  // core/v1 lives at kubernetes-models/v1, every group at kubernetes-models/<group>/<version>.
  const modulePath = `kubernetes-models/${obj.apiVersion}/${obj.kind}`;
  let Model;
  try {
    Model = (await import(modulePath))[obj.kind];
  } catch {
    problems.push({ id, error: `no schema for ${obj.apiVersion} ${obj.kind}` });
    continue;
  }
  try {
    new Model(obj).validate();
  } catch (err) {
    problems.push({ id, error: err instanceof Error ? err.message : String(err) });
  }
}
process.stdout.write(JSON.stringify(problems));
