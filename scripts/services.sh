#!/usr/bin/env bash
# Make sure the integration-test databases are up on loopback:
#   PostgreSQL 127.0.0.1:5432  role root (superuser, trust auth), dbs test + root
#   MariaDB    127.0.0.1:3306  user root with empty password, db test
# Idempotent: when both already answer, it only probes them and exits.
set -euo pipefail
log() { echo "[services] $*"; }
export DEBIAN_FRONTEND=noninteractive

apt_updated=0
apt_install() {
    if (( ! apt_updated )); then apt-get update -qq; apt_updated=1; fi
    apt-get install -y -qq "$@" >/dev/null
}
# wait_for DESCRIPTION CMD...: poll CMD once a second for up to 30 s.
wait_for() {
    local what=$1; shift
    for _ in $(seq 30); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
    log "ERROR: $what not ready after 30 s"; return 1
}
# Run as the postgres OS user from /, so psql doesn't warn about an unreadable cwd.
as_pg() { (cd / && runuser -u postgres -- "$@"); }

# ---------------------------------------------------------------- PostgreSQL
# The probe is exactly what the tests need: TCP, role root, no password, db test,
# superuser, and db root present. -w: never prompt (CI has no stdin).
pg_ok() {
    [[ $(psql -h 127.0.0.1 -p 5432 -U root -d test -w -XAtc \
        "select r.rolsuper and exists(select 1 from pg_database where datname='root')
           from pg_roles r where r.rolname = current_user" 2>/dev/null) == t ]]
}

ensure_postgres() {
    if pg_ok; then log "postgresql ok"; return; fi

    if ! command -v pg_ctlcluster >/dev/null || ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
        log "installing postgresql"
        apt_install postgresql
    fi
    # The package normally creates a cluster; create one if it did not.
    if [[ -z "$(ls /etc/postgresql 2>/dev/null)" ]]; then
        pg_createcluster "$(ls /usr/lib/postgresql | sort -V | tail -1)" main
    fi
    if ! pg_lsclusters -h | awk '$4 == "online" {found=1} END {exit !found}'; then
        log "starting postgresql"
        # No systemd in containers/CI: start the cluster directly.
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
    fi
    wait_for "postgresql" pg_isready -h 127.0.0.1 -p 5432

    # A freshly installed cluster wants passwords over TCP; switch loopback to
    # trust (first matching line wins, so prepend) and reload. Local testing only.
    if ! psql -h 127.0.0.1 -U postgres -d postgres -w -XAtc 'select 1' >/dev/null 2>&1; then
        local hba
        hba=$(as_pg psql -XAtc 'show hba_file')
        log "enabling trust auth for loopback in $hba"
        sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
        as_pg psql -XAtqc 'select pg_reload_conf()' >/dev/null
    fi

    as_pg psql -v ON_ERROR_STOP=1 -XAtq -c "
        DO \$\$BEGIN
          IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'root') THEN
            CREATE ROLE root SUPERUSER LOGIN;
          ELSE
            ALTER ROLE root SUPERUSER LOGIN;
          END IF;
        END\$\$;"
    for db in test root; do   # CREATE DATABASE can't run inside DO, so check first
        [[ $(as_pg psql -XAtc "select 1 from pg_database where datname='$db'") == 1 ]] ||
            as_pg createdb -O root "$db"
    done
    pg_ok || { log "ERROR: postgresql still not usable as root@127.0.0.1/test"; exit 1; }
    log "postgresql ready"
}

# A role that must log in with a password, so the tests can check what a wrong password
# does (everything else on loopback is trust). The password is a test fixture, not a secret.
PG_AUTH_ROLE=sluice_auth
PG_AUTH_PASSWORD=sluice-auth-test
ensure_pg_password_role() {
    local hba
    hba=$(as_pg psql -XAtc 'show hba_file')
    if ! grep -q "^host all $PG_AUTH_ROLE 127.0.0.1/32 scram-sha-256" "$hba"; then
        log "requiring a password for role $PG_AUTH_ROLE in $hba"
        sed -i "1i host all $PG_AUTH_ROLE 127.0.0.1/32 scram-sha-256" "$hba"  # first match wins
        as_pg psql -XAtqc 'select pg_reload_conf()' >/dev/null
    fi
    as_pg psql -v ON_ERROR_STOP=1 -XAtq -c "
        DO \$\$BEGIN
          IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_AUTH_ROLE') THEN
            CREATE ROLE $PG_AUTH_ROLE LOGIN PASSWORD '$PG_AUTH_PASSWORD';
          END IF;
        END\$\$;"
}

# ------------------------------------------------------------------- MariaDB
my_ok() { mariadb --protocol=tcp -h 127.0.0.1 -P 3306 -u root -e 'select 1' test >/dev/null 2>&1; }

ensure_mariadb() {
    if my_ok; then log "mariadb ok"; return; fi

    if [[ ! -x /usr/sbin/mariadbd ]]; then
        log "installing mariadb-server"
        apt_install mariadb-server
    fi
    # `ping` succeeds whenever the server answers, even if access is denied.
    if ! mariadb-admin -u root ping >/dev/null 2>&1; then
        log "starting mariadb"
        mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld   # socket + pid dir; /run is tmpfs
        [[ -d /var/lib/mysql/mysql ]] || mariadb-install-db --user=mysql >/dev/null
        # No systemd: daemonize directly. --user: mariadbd refuses to run as root.
        start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql
        wait_for "mariadb" mariadb-admin -u root ping
    fi

    # Root over the unix socket uses unix_socket auth (we are OS root); from there
    # allow root with an empty password over TCP and create the test db. Both
    # accounts: without skip-name-resolve, 127.0.0.1 may be matched as localhost.
    mariadb -u root -e "
        CREATE DATABASE IF NOT EXISTS test;
        CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
        GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
        ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
        FLUSH PRIVILEGES;"
    my_ok || { log "ERROR: mariadb still not usable as root@127.0.0.1/test"; exit 1; }
    log "mariadb ready"
}

ensure_postgres
ensure_pg_password_role
ensure_mariadb
