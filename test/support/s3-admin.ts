import { Client as S3Client } from 'minio';
import { parseEndpoint } from '../../infra/storage/s3-endpoint.js';
import { requireEnv } from './services.js';

/** The test MinIO as its root user: buckets made and emptied from the host. */
export function s3Admin(): S3Client {
  const s3 = parseEndpoint(requireEnv('TEST_S3_ENDPOINT', 'minio'), false);
  return new S3Client({ endPoint: s3.host, port: s3.port, useSSL: false, accessKey: requireEnv('TEST_S3_ACCESS_KEY', 'minio'), secretKey: requireEnv('TEST_S3_SECRET_KEY', 'minio') });
}

export async function emptyAndRemoveBucket(client: S3Client, bucket: string): Promise<void> {
  const names: string[] = [];
  for await (const item of client.listObjectsV2(bucket, '', true)) if (item.name) names.push(item.name);
  if (names.length > 0) await client.removeObjects(bucket, names);
  await client.removeBucket(bucket);
}
