// sql_database: what the operational endpoints read: the revalidation
// queue and the webhook outbox (GET /metrics) and whether the schema is current (GET /readyz).
#include <filesystem>
#include <set>

#include "db/migrations.hpp"
#include "db/sql_database.hpp"
#include "db/sql_metrics.hpp"
#include "db/sql_migrations.hpp"
#include "db/url.hpp"

namespace receiptd::db {

model::result<job_queue_figures> sql_database::queue_figures(model::unix_ms now) {
  return guarded<job_queue_figures>("queue_figures", [&] {
    long long due = 0, leased = 0, total = 0, oldest = 0;
    soci::indicator oldest_ind = soci::i_null;
    long long t = now;
    conn().session() << std::string(sql::metrics::job_queue), soci::into(due), soci::into(leased),
      soci::into(total), soci::into(oldest, oldest_ind), soci::use(t, "due_now"),
      soci::use(t, "due_free_now"), soci::use(t, "leased_now"), soci::use(t, "oldest_now"),
      soci::use(t, "oldest_free_now");
    job_queue_figures out;
    out.due = due;
    out.leased = leased;
    out.scheduled = total - due - leased;
    if (oldest_ind == soci::i_ok)
      out.oldest_due_at = oldest;
    long long pending = 0, oldest_pending = 0;
    soci::indicator oldest_pending_ind = soci::i_null;
    conn().session() << std::string(sql::metrics::webhook_outbox), soci::into(pending),
      soci::into(oldest_pending, oldest_pending_ind);
    out.webhook_pending = pending;
    if (oldest_pending_ind == soci::i_ok)
      out.webhook_oldest_pending_at = oldest_pending;
    return out;
  });
}

model::result<int> sql_database::missing_migrations() {
  return guarded<int>("missing_migrations", [&] {
    if (kind_ == dialect::sqlite) {
      // A moved or deleted file goes unnoticed by the sessions that have it open.
      auto file = url_parameter(url_, "db");
      std::error_code ec;
      if (file && !file->empty() && *file != ":memory:" && !std::filesystem::exists(*file, ec))
        throw std::runtime_error("the database file " + *file + " is no longer there");
    }
    auto& s = conn().session();
    std::set<int> applied;
    int version = 0;
    std::string name;
    soci::statement st
      = (s.prepare << std::string(sql::migrations::list), soci::into(version), soci::into(name));
    st.execute(false);
    while (st.fetch())
      applied.insert(version);
    int missing = 0;
    for (const auto& m : embedded_migrations())
      if (!applied.contains(m.version))
        ++missing;
    return missing;
  });
}

} // namespace receiptd::db
