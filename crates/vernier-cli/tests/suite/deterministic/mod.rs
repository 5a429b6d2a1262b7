mod compare_gbench;
mod history;
mod instructions_parse;
mod recorded_hosts;
mod system_show;
mod system_tune;
