/** @module cache — informers, indexed stores and the factory that shares them. */
export * from './factory.ts'
export * from './index-funcs.ts'
export * from './informer.ts'
export type { DeleteInfo, EventHandler, HandlerRegistration } from './listener.ts'
export * from './multi-namespace-informer.ts'
export * from './store.ts'
export * from './transforms.ts'
