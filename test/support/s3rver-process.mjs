// An S3-compatible server (npm @20minutes/s3rver) as a process of its own, for tests: started by
// test/support/servers.ts with a folder, a port and bucket names; prints "listening <port>".
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

// s3rver rebuilds the signed path of a bucket-level request (ListObjectsV2, HeadBucket) as
// `/bucket`, while the AWS SDK v3 signs `/bucket/`: every such request fails with
// SignatureDoesNotMatch. The one line that builds it gets the slash the request had, before s3rver
// loads it; signatures are still checked, and nothing else changes.
const authentication = require.resolve('@20minutes/s3rver/lib/middleware/authentication.js');
const source = readFileSync(authentication, 'utf8');
const broken = "canonicalizedResource += '/' + ctx.params.bucket;";
if (!source.includes(broken)) throw new Error('s3rver changed: check its bucket-level signing again');
const fixed = new Module(authentication);
fixed.filename = authentication;
fixed.paths = Module._nodeModulePaths(authentication);
fixed._compile(
  source.replace(broken, `${broken.slice(0, -1)} + (!ctx.params.key && ctx.path.endsWith('/') ? '/' : '');`),
  authentication,
);
fixed.loaded = true;
require.cache[authentication] = fixed;

const { default: S3rver } = await import('@20minutes/s3rver');
const [directory, port, ...buckets] = process.argv.slice(2);
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory,
  silent: true,
  configureBuckets: buckets.map((name) => ({ name })),
});
const { port: listening } = await server.run();
// What the store answered, as a bucket's bill counts it: requests, and the bytes of the bodies of
// its GET answers. SIGHUP prints the totals (the storage benchmark reads them; a proxy in front
// counted them before, at a hop and a process's CPU that the S3 side alone paid).
let requests = 0;
let bytes = 0;
server.httpServer.on('request', (request, response) => {
  requests++;
  if (request.method !== 'GET') return;
  response.once('finish', () => {
    if (response.statusCode < 300) bytes += Number(response.getHeader('content-length') ?? 0);
  });
});
process.on('SIGHUP', () => process.stdout.write(`counted ${requests} ${bytes}\n`));
process.stdout.write(`listening ${listening}\n`);
// SIGUSR2 revokes the one access key (s3rver's own AWSAccount.revokeAccessKey: every request is
// then a 403 InvalidAccessKeyId, as for a key an operator revoked), and the next restores it.
const { default: AWSAccount } = await import('@20minutes/s3rver/lib/models/account.js');
process.on('SIGUSR2', () => {
  const account = AWSAccount.DUMMY_ACCOUNT;
  if (account.accessKeys.has('S3RVER')) {
    account.revokeAccessKey('S3RVER');
    process.stdout.write('keys revoked\n');
  } else {
    account.createKeyPair('S3RVER', 'S3RVER');
    process.stdout.write('keys restored\n');
  }
});
process.once('SIGTERM', () => server.close().then(() => process.exit(0)));
