// libpq, PostgreSQL's C client library (Debian's libpq-dev puts its headers under postgresql/).
#include <postgresql/libpq-fe.h>
