/**
 * @module resource-client — every verb on one resource type, dynamically typed.
 */

import type { FormatOptions } from '../codec/content-negotiation.ts'
import { type ResponseFormat, responseFormat } from '../codec/response-format.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeList, KubeObject, PartialObjectMetadata, Status, WatchEvent } from '../core/types.ts'
import { decodeJson } from '../transport/body-codec.ts'
import type { Method, Transport } from '../transport/transport.ts'
import { type ApplyOptions, type CallOptions, callFields, type ListCallOptions } from './call-options.ts'
import {
  type DeleteOptions,
  type ListOptions,
  listQuery,
  type WriteOptions,
  writeQuery,
} from './list-options.ts'
import { openRawWatch, type RawWatchOptions, type WatchStream } from './raw-watch.ts'
import { apiVersionOf, type ResourceType, resourcePath } from './resource.ts'

/** Patch content types. `apply` is server-side apply (use {@link ResourceClient.apply}). */
export type PatchType = 'merge' | 'json' | 'strategic' | 'apply'

const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
}

/** JSON patch operation (RFC 6902). */
export interface JsonPatchOp {
  /** The operation; a failed `test` makes the whole patch fail, so nothing is applied. */
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test'
  /** Target as a JSON Pointer (RFC 6901): `/metadata/labels/app`, with `~1` for `/` and `~0` for `~`. */
  path: string
  /** The value for `add`, `replace` and `test`. */
  value?: unknown
  /** Source JSON Pointer for `move` and `copy`. */
  from?: string
}

/**
 * A client for one resource type, optionally bound to a namespace.
 *
 * For a namespaced type with no namespace, `list`/`watch` span all namespaces and
 * single-object verbs take the namespace from the object or fail clearly.
 *
 * @example
 * const cms = client.resource(CORE_TYPES.configMaps, 'default')
 * const cm = await cms.get('settings')
 */
export class ResourceClient<T extends KubeObject = KubeObject> {
  /** The resource every call addresses. */
  readonly type: ResourceType
  /** The bound namespace; always undefined for a cluster-scoped type, and undefined = all namespaces for list and watch. */
  readonly namespace: string | undefined
  readonly #transport: Transport

  /** Usually obtained from {@link KubeClient.resource}. A namespace given for a cluster-scoped type is dropped. */
  constructor(transport: Transport, type: ResourceType, namespace?: string | undefined) {
    this.#transport = transport
    this.type = type
    this.namespace = type.namespaced ? namespace : undefined
  }

  /** The same resource in another namespace. */
  inNamespace(namespace: string | undefined): ResourceClient<T> {
    return new ResourceClient<T>(this.#transport, this.type, namespace)
  }

  #ns(objectNamespace?: string): string | undefined {
    if (!this.type.namespaced) return undefined
    const ns = objectNamespace ?? this.namespace
    if (ns === undefined || ns === '') {
      throw new EdgeopError('EDGEOP_ERR_INVALID', `${this.type.resource} is namespaced: give a namespace`, {
        step: 'build request path',
      })
    }
    if (this.namespace !== undefined && objectNamespace !== undefined && objectNamespace !== this.namespace) {
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        `object namespace ${JSON.stringify(objectNamespace)} differs from the client's namespace ${JSON.stringify(this.namespace)}`,
        { step: 'build request path' },
      )
    }
    return ns
  }

  #path(name?: string, subresource?: string, namespace?: string): string {
    return resourcePath(
      this.type,
      name === undefined && namespace === undefined ? this.namespace : this.#ns(namespace),
      name,
      subresource,
    )
  }

  #call<R>(
    method: Method,
    path: string,
    o: CallOptions,
    extra: { body?: unknown; contentType?: string; accept?: string } = {},
  ): Promise<R> {
    return this.#transport.request<R>({ method, path, ...extra, ...callFields(o) })
  }

  /** GET one object. 404 → ApiError with `isNotFound`. */
  get(name: string, o: CallOptions & { namespace?: string | undefined } = {}): Promise<T> {
    return this.#call('GET', this.#path(name, undefined, o.namespace), o)
  }

  /**
   * One page of a list (use `limit` + `continue`, or {@link listPages}). In protobuf when the resource type
   * carries its protobuf kind (see {@link FormatOptions}); the items are the same JSON-shaped objects either way.
   */
  list(o: ListCallOptions = {}): Promise<KubeList<T>> {
    return this.#list(responseFormat(this.type, o), o)
  }

  async #list<R extends KubeObject>(format: ResponseFormat, o: ListCallOptions): Promise<KubeList<R>> {
    const path = resourcePath(this.type, this.namespace) + listQuery(o)
    // A JSON list read whole goes through the transport's JSON reader, as every other call does.
    if (format.kind === undefined && !o.keepBytes)
      return this.#call('GET', path, o, { accept: format.accept })
    const { contentType, bytes, json } = await this.#getBytes(format, path, o)
    return format.list<R>(contentType, bytes, o, json)
  }

  /** GET `path` as `format` asks for it: the answer's bytes, its Content-Type, and its reader as JSON. */
  async #getBytes(
    format: ResponseFormat,
    path: string,
    o: CallOptions,
  ): Promise<{ contentType: string; bytes: Buffer; json: () => never }> {
    const spec = {
      method: 'GET' as const,
      path,
      accept: format.accept,
      decodeStatus: format.decodeStatus,
      ...callFields(o),
    }
    const { contentType, bytes } = await this.#transport.requestBytes(spec)
    return { contentType, bytes, json: () => decodeJson(bytes.toString('utf8'), spec) as never }
  }

  /** Every page of a list, following `continue` tokens. */
  async *listPages(o: ListCallOptions = {}): AsyncGenerator<KubeList<T>> {
    let cont = o.continue
    do {
      const page = await this.list({ ...o, continue: cont })
      yield page
      cont = page.metadata?.continue || undefined
    } while (cont !== undefined)
  }

  /** Creates `obj` (namespace from the object or the client). 409 → `isAlreadyExists`. */
  create(obj: T, o: WriteOptions & CallOptions = {}): Promise<T> {
    const path = resourcePath(this.type, this.#ns(obj.metadata?.namespace)) + writeQuery(o)
    return this.#call('POST', path, o, { body: withType(obj, this.type) })
  }

  /** Replaces `obj`; `metadata.resourceVersion` makes it conditional (409 `isConflict` when stale). */
  update(obj: T, o: WriteOptions & CallOptions = {}): Promise<T> {
    return this.#call('PUT', this.#path(nameOf(obj), undefined, obj.metadata.namespace) + writeQuery(o), o, {
      body: withType(obj, this.type),
    })
  }

  /** Patches one object (merge, JSON patch, or strategic merge). */
  patch(
    name: string,
    patch: unknown,
    type: Exclude<PatchType, 'apply'> = 'merge',
    o: WriteOptions & CallOptions & { namespace?: string | undefined; subresource?: string } = {},
  ): Promise<T> {
    return this.#call('PATCH', this.#path(name, o.subresource, o.namespace) + writeQuery(o), o, {
      body: patch,
      contentType: PATCH_CONTENT_TYPE[type],
    })
  }

  /**
   * Server-side apply: sends the fields this manager owns; the server merges and
   * tracks ownership. 409 `isConflict` (cause `FieldManagerConflict`) unless `force`.
   */
  apply(obj: Partial<T> & KubeObject, o: ApplyOptions & { subresource?: string }): Promise<T> {
    const path =
      this.#path(nameOf(obj), o.subresource, obj.metadata.namespace) +
      writeQuery(
        { fieldManager: o.fieldManager, ...(o.dryRun ? { dryRun: true } : {}) },
        { force: o.force ? true : undefined },
      )
    return this.#call('PATCH', path, o, {
      body: withType(obj, this.type),
      contentType: PATCH_CONTENT_TYPE.apply,
    })
  }

  /** Deletes one object. Returns the object (when finalizers delay deletion) or a Status. */
  delete(
    name: string,
    o: DeleteOptions & CallOptions & { namespace?: string | undefined } = {},
  ): Promise<T | Status> {
    return this.#call(
      'DELETE',
      this.#path(name, undefined, o.namespace) + writeQuery({ ...(o.dryRun ? { dryRun: true } : {}) }),
      o,
      {
        body: deleteBody(o),
      },
    )
  }

  /** Deletes every object matching the selectors. */
  deleteCollection(o: ListOptions & DeleteOptions & CallOptions = {}): Promise<KubeList<T> | Status> {
    const path = resourcePath(this.type, this.#ns()) + listQuery(o)
    return this.#call('DELETE', path, o, { body: deleteBody(o) })
  }

  /** GET a subresource (`status`, `scale`, …). */
  getSubresource<R = T>(
    name: string,
    subresource: string,
    o: CallOptions & { namespace?: string | undefined } = {},
  ): Promise<R> {
    return this.#call('GET', this.#path(name, subresource, o.namespace), o)
  }

  /** PUT a subresource (RV-guarded like update). */
  updateSubresource<R extends KubeObject = T>(
    subresource: string,
    obj: R,
    o: WriteOptions & CallOptions = {},
  ): Promise<R> {
    return this.#call(
      'PUT',
      this.#path(nameOf(obj), subresource, obj.metadata.namespace) + writeQuery(o),
      o,
      { body: obj },
    )
  }

  /** The `status` subresource. */
  getStatus(name: string, o: CallOptions & { namespace?: string | undefined } = {}): Promise<T> {
    return this.getSubresource(name, 'status', o)
  }

  /** Replaces status only (spec changes in `obj` are ignored by the server). */
  updateStatus(obj: T, o: WriteOptions & CallOptions = {}): Promise<T> {
    return this.updateSubresource('status', obj, o)
  }

  /** The `scale` subresource (autoscaling/v1 Scale). */
  getScale(name: string, o: CallOptions & { namespace?: string | undefined } = {}): Promise<Scale> {
    return this.getSubresource<Scale>(name, 'scale', o)
  }

  /** Replaces the scale. */
  updateScale(scale: Scale, o: WriteOptions & CallOptions = {}): Promise<Scale> {
    return this.updateSubresource<Scale>(
      'scale',
      { apiVersion: 'autoscaling/v1', kind: 'Scale', ...scale },
      o,
    )
  }

  /**
   * Metadata-only get (PartialObjectMetadata, managedFields included), in protobuf unless `format: 'json'`, as
   * the metadata-only list and watch and client-go's metadata client ask for it; a JSON answer is read as JSON.
   */
  async getMetadata(
    name: string,
    o: CallOptions & Pick<FormatOptions, 'format'> & { namespace?: string | undefined } = {},
  ): Promise<PartialObjectMetadata> {
    const format = responseFormat(this.type, o, 'PartialObjectMetadata')
    const path = this.#path(name, undefined, o.namespace)
    if (format.kind === undefined) return this.#call('GET', path, o, { accept: format.accept })
    const { contentType, bytes, json } = await this.#getBytes(format, path, o)
    return format.object<PartialObjectMetadata>(contentType, bytes, json)
  }

  /** Metadata-only list (PartialObjectMetadataList), in protobuf unless `format: 'json'` (client-go's metadata client). */
  listMetadata(o: ListCallOptions = {}): Promise<KubeList<PartialObjectMetadata>> {
    return this.#list(responseFormat(this.type, o, 'PartialObjectMetadataList'), o)
  }

  /**
   * Opens a raw watch: resolves once the server has accepted it (status and headers
   * received), rejects with an {@link ApiError} if it refused. `events` yields what
   * the server sends until it closes the stream, `close()` is called, or the signal
   * aborts. No reconnection here: that is the `watch` layer's job.
   */
  openWatch(o: RawWatchOptions = {}): Promise<WatchStream<T>> {
    return openRawWatch<T>(this.#transport, this.type, this.namespace, o)
  }

  /**
   * A raw watch as one async iterable (opens on first iteration; stopping the
   * iteration closes the stream). See {@link openWatch}.
   */
  async *watch(o: RawWatchOptions = {}): AsyncGenerator<WatchEvent<T>> {
    const stream = await this.openWatch(o)
    try {
      yield* stream.events
    } finally {
      stream.close()
    }
  }
}

/** autoscaling/v1 Scale. */
export interface Scale extends KubeObject {
  /** `replicas`: the desired count; writing it through {@link ResourceClient.updateScale} scales the target. */
  spec?: { replicas?: number }
  /** The observed `replicas`, and `selector`: the label query (string form) of the pods counted. */
  status?: { replicas?: number; selector?: string }
}

function nameOf(obj: KubeObject): string {
  const name = obj.metadata?.name
  if (!name)
    throw new EdgeopError('EDGEOP_ERR_INVALID', 'the object has no metadata.name', {
      step: 'build request path',
    })
  return name
}

function withType<O extends KubeObject>(obj: O, type: ResourceType): O {
  if (obj.apiVersion && obj.kind) return obj
  return {
    ...obj,
    apiVersion: obj.apiVersion ?? apiVersionOf(type),
    ...(type.kind && !obj.kind ? { kind: type.kind } : {}),
  }
}

function deleteBody(o: DeleteOptions): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {}
  if (o.propagationPolicy) body.propagationPolicy = o.propagationPolicy
  if (o.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds
  if (o.preconditions) body.preconditions = o.preconditions
  if (o.dryRun) body.dryRun = ['All']
  return Object.keys(body).length === 0 ? undefined : { apiVersion: 'v1', kind: 'DeleteOptions', ...body }
}
