mod async_worker;
mod compare_gbench;
mod history;
mod instructions_parse;
mod recorded_hosts;
mod store_access;
mod system_show;
mod system_tune;
