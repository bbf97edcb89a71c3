export const OBJECT_STORES = Symbol('OBJECT_STORES');
