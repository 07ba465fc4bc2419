// loopkit-etcd only: the etcd store of locks behind open_lock_store, as
// state_on_etcd is for the state tools. A static initializer, so that the
// tools in bin/ (which never link this file) keep the etcd client out.
#include "core/lock_etcd.hpp"
#include "core/storage.hpp"

namespace {
const bool registered = (loopkit::lock_store_on_etcd = &loopkit::etcdlock::store, true);
}  // namespace
