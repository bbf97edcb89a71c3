-- Run once by the image's entrypoint when the data directory is new, as root: the Mroonga engine (kept
-- installed across restarts in mysql.plugin) and mroonga_command(), which search ranks through. The
-- platform's own user has no right to create either.
INSTALL SONAME 'ha_mroonga';
CREATE FUNCTION IF NOT EXISTS mroonga_command RETURNS STRING SONAME 'ha_mroonga.so';
