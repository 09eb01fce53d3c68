/** A multipart/form-data body as inject() and fetch() send it, built by the platform's own FormData. */
export async function multipartBody(
  fields: Record<string, string>,
  file?: { name?: string; data: Buffer; filename?: string; type?: string },
): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  if (file) {
    form.append(
      file.name ?? "image",
      new Blob([file.data], { type: file.type ?? "image/jpeg" }),
      file.filename ?? "photo.jpg",
    );
  }
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const request = new Request("http://localhost/", { method: "POST", body: form });
  return {
    payload: Buffer.from(await request.arrayBuffer()),
    headers: { "content-type": request.headers.get("content-type") ?? "" },
  };
}
