/** The running ManagerProcess, provided to the admin API by `ManagerAdminModule.forRoot`. */
export const MANAGER_PROCESS = Symbol('MANAGER_PROCESS');
/** What `POST shutdown` calls: stops every worker, then the process. */
export const MANAGER_SHUTDOWN = Symbol('MANAGER_SHUTDOWN');
